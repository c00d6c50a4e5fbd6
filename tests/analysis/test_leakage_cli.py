"""``report --audit``: the files and tables, every refusal, and the product's whole path on the demo.

The built run is test_leakage.py's (its docstring works out each contribution). A hand-written
``audit_summary.json`` with FN = 0 of N = 100 stands for a scored audit: at 0/N the Wilson upper
bound is z²/(N + z²) exactly (the centre plus the half-width, both z²/(2(N + z²))).
"""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from builder import RunSpec, write_run
from click.testing import CliRunner
from test_leakage import FIVE, FOUR, MODELS, ONE, QUESTIONS, RUN_ID, THREE, TWO

from oracleproto.cli.main import cli
from oracleproto.leakaudit.stats import Z_95
from oracleproto.verify.demo import find_demo_run

U_0_OF_100 = Z_95**2 / (100 + Z_95**2)  # 0.0369936…


def scored(folder: Path, **changes: Any) -> Path:
    """A scored audit folder of the built run: FN 0 of N 100 (40 caught leaks, 60 clean results)."""
    folder.mkdir(parents=True, exist_ok=True)
    summary = {"tp": 40, "tn": 60, "fp": 0, "fn": 0, "n": 100, "run_id": RUN_ID, **changes}
    (folder / "audit_summary.json").write_text(json.dumps(summary), encoding="utf-8")
    (folder / "audit.json").write_text(json.dumps({"run_id": RUN_ID, "parameters": {"models": None}}))
    return folder


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return write_run(tmp_path / "runs", RunSpec(n=2, models=MODELS, questions=QUESTIONS))


def report(*args: str) -> Any:
    return CliRunner().invoke(cli, ["report", *args])


def test_paper_writes_the_bounds_beside_the_tables(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = report(
        str(run_dir), "--audit", str(scored(tmp_path / "audit")), "--out", str(out), "--bootstrap", "50"
    )
    assert result.exit_code == 0, result.output
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO((out / "leakage_bounds.csv").read_text()))}
    # ONE: T = 6, u·T = 6u < 1, so Δ = 6u of its largest contribution 7/17.
    assert float(rows[ONE]["leaked_trials_bound"]) == pytest.approx(6 * U_0_OF_100, abs=1e-6)
    assert float(rows[ONE]["leak_loss_max"]) == pytest.approx(6 * U_0_OF_100 * 7 / 17, abs=1e-6)
    # THREE: T = 5, Δ = 5u·7/17; 1 − 0.152 stays above ONE's 0.75, so no order flips.
    assert float(rows[THREE]["value_leak_low"]) == pytest.approx(1 - 5 * U_0_OF_100 * 7 / 17, abs=1e-6)
    assert all(r["could_fall_below"] == "" for r in rows.values())
    assert rows[FIVE]["value"] == rows[FIVE]["leak_loss_max"] == ""
    document = json.loads((out / "leakage.json").read_text())
    assert document["convention"] == "paper" and document["could_flip"] == []
    assert document["audits"][0]["fn_rate_upper"] == pytest.approx(U_0_OF_100, abs=1e-6)
    assert "### Leakage-adjusted composite accuracy" in result.stdout
    assert "Orders the bound could flip: none." in result.stdout
    assert (out / "table3_overall.md").is_file() and not (run_dir / "analysis").exists()


def test_points_f1_flags_the_order_the_bound_could_flip(run_dir: Path, tmp_path: Path) -> None:
    """ONE 80 over TWO 75: u·T = 6u = 0.222 of its 30-point trial, 6.66 points: 73.34 ≤ 75."""
    result = report(str(run_dir), "--convention", "points-f1", "--audit", str(scored(tmp_path / "audit")))
    assert result.exit_code == 0, result.output
    folder = run_dir / "analysis" / "points-f1"
    document = json.loads((folder / "leakage.json").read_text())
    assert document["could_flip"] == [[ONE, TWO]]
    assert document["models"][ONE]["leak_loss_max"] == pytest.approx(6 * U_0_OF_100 * 30, abs=1e-6)
    assert document["models"][THREE]["trials"] is None  # no official score, no bound
    assert "Orders the bound could flip: vendor-a/one::r5::c4 above vendor-b/two::r5::c4." in result.stdout
    rows = list(csv.DictReader(io.StringIO((folder / "leakage_bounds.csv").read_text())))
    assert [r["model"] for r in rows] == [ONE, TWO, THREE, FOUR, FIVE]
    assert rows[0]["could_fall_below"] == TWO


def _refusal_cases(tmp: Path) -> dict[str, tuple[Path, str]]:
    bare = tmp / "sampled"
    bare.mkdir(parents=True)
    (bare / "audit.json").write_text("{}")
    empty = tmp / "empty"
    empty.mkdir()
    bad = scored(tmp / "bad")
    (bad / "audit_summary.json").write_text("{not json")
    return {
        "another run": (
            scored(tmp / "other", run_id="20250101-000000-0000"),
            "was sampled from run 20250101-000000-0000, not from run 20260102-030405-abcd",
        ),
        "not scored": (bare, "has not been scored yet: audit_summary.json is missing"),
        "not an audit": (empty, "is not an audit folder (no audit.json either)"),
        "not JSON": (bad, "not a JSON audit summary"),
        "nothing labelled": (
            scored(tmp / "zero", tp=0, tn=0, n=0),
            "no labelled item in its confusion matrix",
        ),
        "counts disagree": (scored(tmp / "edited", fn=3), "tp + tn + fp + fn = 103 is not n = 100"),
        "a count not a count": (scored(tmp / "neg", fn=-1), "'fn' must be a count"),
        "no run named": (scored(tmp / "anon", run_id=None), "names no run (run_id None)"),
        "another file": (
            scored(tmp / "file") / "audit.json",
            "is not an audit: --audit takes an audit folder",
        ),
    }


@pytest.mark.parametrize("convention", ["paper", "points-f1"])
def test_refusals_write_nothing(run_dir: Path, tmp_path: Path, convention: str) -> None:
    for case, (audit, message) in _refusal_cases(tmp_path / "audits").items():
        out = tmp_path / "out"
        result = report(str(run_dir), "--convention", convention, "--audit", str(audit), "--out", str(out))
        assert result.exit_code == 2, (case, result.output)
        assert message in result.stderr, (case, result.stderr)
        assert "Traceback" not in result.output, case
        assert not out.exists(), case
    # Without --out, points-f1 would write RUN/analysis/points-f1: a refused audit leaves no trace.
    result = report(str(run_dir), "--convention", convention, "--audit", str(tmp_path / "audits" / "other"))
    assert result.exit_code == 2 and not (run_dir / "analysis").exists()


def test_paper_without_out_is_refused(run_dir: Path, tmp_path: Path) -> None:
    result = report(str(run_dir), "--audit", str(scored(tmp_path / "audit")))
    assert result.exit_code == 2
    assert "cannot hold (verify regenerates it from db/ alone): give --out DIR" in result.stderr
    assert not (run_dir / "analysis").exists()


def test_the_demo_audited_by_the_product(tmp_path: Path) -> None:
    """audit sample → sim audit-labels → audit score → report --audit (both), and the run still verifies."""
    demo = tmp_path / "runs" / find_demo_run().name
    shutil.copytree(find_demo_run(), demo)
    audit = tmp_path / "audit"
    runner = CliRunner()
    for args in (
        ["audit", "sample", str(demo), "--out", str(audit), "--seed", "0"],
        ["sim", "audit-labels", str(audit)],
        ["audit", "score", str(audit), "--format", "json"],
    ):
        done = runner.invoke(cli, args)
        assert done.exit_code == 0, (args, done.output)
    summary = json.loads((audit / "audit_summary.json").read_text())
    assert summary["run_id"] == demo.name
    out = tmp_path / "paper"
    paper = runner.invoke(
        cli, ["report", str(demo), "--audit", str(audit), "--out", str(out), "--bootstrap", "200"]
    )
    assert paper.exit_code == 0, paper.output
    document = json.loads((out / "leakage.json").read_text())
    assert document["audits"][0]["fn_rate_upper"] == summary["fn_rate_ci"][1]
    assert document["audits"][0]["fn"] == summary["fn"] and document["audits"][0]["n"] == summary["n"]
    for row in document["models"].values():
        assert row["leak_loss_max"] > 0 and row["ci_leak_low"] < row["ci_low"]
        assert row["leaked_trials_bound"] == pytest.approx(row["trials"] * summary["fn_rate_ci"][1], abs=1e-5)
    pf1 = runner.invoke(cli, ["report", str(demo), "--convention", "points-f1", "--audit", str(audit)])
    assert pf1.exit_code == 0, pf1.output
    assert (demo / "analysis" / "points-f1" / "leakage.json").is_file()
    assert "### Leakage-adjusted points-f1 score" in pf1.stdout
    verified = runner.invoke(cli, ["verify", str(demo)])
    assert verified.exit_code == 0, verified.output
    assert "skip  analysis/points-f1/" in verified.stdout
