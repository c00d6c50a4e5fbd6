"""CLI, atomic writes, byte-determinism of every output file (plots included), bootstrap."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import ALPHA, BETA

from oracleproto.analysis import bootstrap as bs
from oracleproto.analysis.plots import pareto_frontier
from oracleproto.analysis.report import analyze_run
from oracleproto.analysis.writer import write_analysis
from oracleproto.cli.main import cli
from oracleproto.errors import AnalysisError


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_cli_writes_beside_the_sealed_analysis_and_prints_tables(main_run: Path, prices_file: Path) -> None:
    # The run's manifest is the earlier implementation's: its sealed analysis is reference-v4, so a
    # paper report without --out goes beside it, into analysis/paper/ (cli/report_target.py).
    result = CliRunner().invoke(
        cli, ["report", str(main_run), "--prices", str(prices_file), "--bootstrap", "50"]
    )
    assert result.exit_code == 0, result.output
    assert "### Overall performance and cost" in result.stdout
    assert "| vendor-a/alpha::r5::c4 | 0.6069 |" in result.stdout
    assert "sealed analysis is under reference-v4: this paper report went beside it" in result.stderr
    assert [p.name for p in (main_run / "analysis").iterdir()] == ["paper"]
    out = main_run / "analysis" / "paper"
    names = {p.name for p in out.iterdir()}
    assert {"summary.json", "table3_overall.tex", "table5_consistency.csv", "cost_vs_composite.svg"} <= names
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["convention"] == "paper"
    assert summary["bootstrap"]["samples"] == 50


def test_cli_reference_convention_and_single_format(main_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "ref"
    result = CliRunner().invoke(
        cli, ["report", str(main_run), "--convention", "reference-v4", "--format", "csv", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        ".oracleproto-analysis",
        "per_model_summary.csv",
        "table1_questions.csv",
        "table2_models.csv",
        "table3_overall.csv",
        "table4_buckets.csv",
        "table5_consistency.csv",
        "table_counts.csv",
        "table_pairs.csv",
    ]
    row = (out / "table3_overall.csv").read_text(encoding="utf-8").splitlines()[1]
    assert row.endswith(",reference-v4,algorithm2")


def test_cli_bad_inputs(main_run: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(cli, ["report", str(main_run), "--convention", "v9"])
    assert bad.exit_code == 2
    assert "error: unknown scoring convention 'v9'" in bad.stderr
    missing = runner.invoke(cli, ["report", str(tmp_path / "none")])
    assert "none: run directory not found" in missing.stderr
    prices = tmp_path / "p.json"
    prices.write_text("{", encoding="utf-8")
    bad_prices = runner.invoke(cli, ["report", str(main_run), "--prices", str(prices)])
    assert "is not valid JSON" in bad_prices.stderr
    assert not (main_run / "analysis").exists()  # nothing written on bad input


def test_outputs_are_byte_identical(main_run: Path, prices_file: Path, tmp_path: Path) -> None:
    from oracleproto.analysis.cost import load_prices

    prices = load_prices(prices_file)
    first = write_analysis(analyze_run(main_run, prices=prices, bootstrap_samples=100), tmp_path / "a")
    write_analysis(analyze_run(main_run, prices=prices, bootstrap_samples=100), tmp_path / "b")
    # marker, summary, 7 tables (table_pairs among them) × 3 formats, per-model summary, 3 plots × 2
    assert len(first) == 30
    assert digests(tmp_path / "a") == digests(tmp_path / "b")
    svg = (tmp_path / "a" / "cost_vs_composite.svg").read_text(encoding="utf-8")
    assert "<dc:date>" not in svg
    assert "Pareto frontier" in svg or "Pareto" in svg


def test_failed_write_leaves_previous_output(
    main_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = analyze_run(main_run, bootstrap_samples=0)
    out = tmp_path / "parent" / "out"
    write_analysis(result, out, "md")
    before = digests(out)

    def boom(*_: object, **__: object) -> list[Path]:
        raise RuntimeError("disk full")

    monkeypatch.setattr("oracleproto.analysis.plots.write_plots", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        write_analysis(result, out, "all")
    assert digests(out) == before
    assert [p.name for p in out.parent.iterdir()] == ["out"]  # no temporary directory left behind


def test_refuses_foreign_output_dir(main_run: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(AnalysisError, match="exists and is not an oracleproto analysis directory"):
        write_analysis(analyze_run(main_run, bootstrap_samples=0), foreign)
    with pytest.raises(AnalysisError, match="unknown format 'pdf'"):
        write_analysis(analyze_run(main_run, bootstrap_samples=0), tmp_path / "x", "pdf")


def test_bootstrap_ci_and_paired_differences(main_run: Path) -> None:
    result = analyze_run(main_run, bootstrap_samples=400, seed=3)
    again = analyze_run(main_run, bootstrap_samples=400, seed=3)
    assert result.models[ALPHA]["ci"] == again.models[ALPHA]["ci"]
    lo, hi = result.models[ALPHA]["ci"]["composite_accuracy"]
    assert lo <= result.models[ALPHA]["composite_accuracy"] <= hi
    assert lo < hi
    diff = next(d for d in result.paired_differences if d["metric"] == "pass_at_1_avg")
    assert (diff["a"], diff["b"]) == (ALPHA, BETA)
    assert diff["difference"] == pytest.approx(
        result.models[ALPHA]["pass_at_1_avg"] - result.models[BETA]["pass_at_1_avg"]
    )


def test_resample_weights_keep_strata_sizes() -> None:
    strata = np.array([0, 0, 0, 1, 1, 2])
    w = bs.resample_weights(strata, 50, seed=1)
    assert w.shape == (50, 6)
    assert (w[:, :3].sum(axis=1) == 3).all() and (w[:, 3:5].sum(axis=1) == 2).all() and (w[:, 5] == 1).all()
    # ratio of sums: a replicate drawing question 0 three times gives num0/den0
    ratio = bs.replicate_ratio(np.array([[3.0, 0, 0, 0, 0, 0]]), np.arange(6.0), np.ones(6))
    assert ratio.tolist() == [0.0]
    assert bs.percentile_ci(np.array([np.nan])) is None


def test_pareto_frontier() -> None:
    points = [("cheap", 1.0, 0.5), ("best", 3.0, 0.7), ("dominated", 4.0, 0.6), ("pricey", 2.0, 0.4)]
    assert pareto_frontier(points) == ["cheap", "best"]
