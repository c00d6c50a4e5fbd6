"""Tables 1 and 2 (question types, models under test), display names, and δ = 0's exclusion."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from builder import FAIL, RunSpec, T, ok, write_run
from click.testing import CliRunner
from conftest import ALPHA, BETA, main_spec

from oracleproto.analysis.report import analyze_run
from oracleproto.analysis.setup_tables import SETUP_TABLES, render_setup
from oracleproto.analysis.tables import RENDERERS, TABLES
from oracleproto.analysis.writer import write_analysis
from oracleproto.cli.main import cli
from oracleproto.errors import AnalysisError
from oracleproto.settings.model import AnalysisSettings
from oracleproto.verify.regen import check_analysis

AFTER = T(error="skipped_after_resolution", prompt=0, completion=0, tools=0, steps=0, latency=0)


def named(names: dict[str, str]) -> str:
    """A config snapshot text recording ``names`` as MODEL_DISPLAY_NAMES."""
    return json.dumps({"analysis": {"display_names": names}})


def with_names(spec: RunSpec, names: dict[str, str]) -> RunSpec:
    return replace(spec, snapshots={slug: named(names) for slug in spec.models})


def test_table1_counts_the_run_by_type_and_answering_mode(main_run: Path) -> None:
    result = analyze_run(main_run, bootstrap_samples=0)
    assert result.question_distribution == {
        "yes_no": {"single": 2, "multi": 0, "total": 2},
        "binary_named": {"single": 1, "multi": 0, "total": 1},
        "multiple_choice": {"single": 2, "multi": 2, "total": 4},
        "total": {"single": 5, "multi": 2, "total": 7},
    }
    assert render_setup(result, "table1_questions", "md").splitlines()[2:] == [
        "| Question Type | Single-answer | Multi-answer | Total |",
        "|---|---:|---:|---:|",
        "| Yes/No | 2 | 0 | 2 |",
        "| Binary Choice | 1 | 0 | 1 |",
        "| Multiple Choice | 2 | 2 | 4 |",
        "| **Total** | **5** | **2** | **7** |",
    ]
    assert render_setup(result, "table1_questions", "csv").splitlines()[-1] == "Total,5,2,7"
    latex = render_setup(result, "table1_questions", "latex")
    assert r"\textbf{Total} & \textbf{5} & \textbf{2} & \textbf{7} \\" in latex
    assert r"\label{tab:table1_questions}" in latex


def test_table1_counts_only_the_questions_the_manifest_selected(tmp_path: Path) -> None:
    run = write_run(tmp_path, main_spec())
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["filters"]["question_ids"] = ["q1", "q6"]
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    dist = analyze_run(run, bootstrap_samples=0).question_distribution
    assert dist["total"] == {"single": 1, "multi": 1, "total": 2}
    manifest["filters"]["question_ids"] = ["q1", "q99"]
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(AnalysisError, match="lists 'q99', which no per-model DB has"):
        analyze_run(run, bootstrap_samples=0)


def test_table2_lists_each_model_with_its_cutoff_and_exclusions(main_run: Path) -> None:
    result = analyze_run(main_run, bootstrap_samples=0)
    assert result.models_under_test == [
        {
            "model": "vendor-a/alpha",
            "name": "vendor-a/alpha",
            "training_cutoff": "2025-01-01",
            "excluded_by_cutoff": 1,
            "excluded_after_resolution": 0,
        },
        {
            "model": "vendor-b/beta",
            "name": "vendor-b/beta",
            "training_cutoff": "2025-01-01",
            "excluded_by_cutoff": 1,
            "excluded_after_resolution": 0,
        },
    ]
    # The paper's three columns while no question was excluded after resolution.
    assert render_setup(result, "table2_models", "csv").splitlines() == [
        "Model,Training Cutoff,Excluded by Cutoff",
        "vendor-a/alpha,2025-01-01,1",
        "vendor-b/beta,2025-01-01,1",
    ]
    latex = render_setup(result, "table2_models", "latex")
    assert r"vendor-a/alpha & 2025-01-01 & 1 \\" in latex
    assert "Excluded after Resolution" not in latex


@pytest.mark.parametrize("convention", ["paper", "reference-v4"])
def test_an_after_resolution_exclusion_is_scored_like_a_cutoff_one_and_reported_apart(
    tmp_path: Path, convention: str
) -> None:
    cut = write_run(tmp_path / "cut", main_spec())
    spec = main_spec()
    spec.models[ALPHA]["q4"] = [ok("C"), ok("D"), AFTER]
    spec.models[BETA]["q3"] = [AFTER, AFTER, AFTER]
    after = write_run(tmp_path / "after", spec)
    by_cutoff = analyze_run(cut, convention, bootstrap_samples=50, seed=1)
    by_resolution = analyze_run(after, convention, bootstrap_samples=50, seed=1)
    assert by_resolution.models == by_cutoff.models
    assert [
        (r["excluded_by_cutoff"], r["excluded_after_resolution"]) for r in by_resolution.models_under_test
    ] == [
        (0, 1),
        (0, 1),
    ]
    assert (
        "vendor-a/alpha: 1 question(s) excluded after resolution (χ ≥ τ, δ = 0), not by the training cutoff"
        in (by_resolution.notes)
    )
    assert render_setup(by_resolution, "table2_models", "md").splitlines()[2:4] == [
        "| Model | Training Cutoff | Excluded by Cutoff | Excluded after Resolution |",
        "|---|---:|---:|---:|",
    ]


def test_recorded_display_names_name_every_table_and_plot_input(tmp_path: Path) -> None:
    run = write_run(tmp_path, with_names(main_spec(), {"vendor-a/alpha": "Alpha 1 | α", "other/x": "X"}))
    result = analyze_run(run, bootstrap_samples=0)
    assert result.display_names == {ALPHA: "Alpha 1 | α", BETA: BETA}
    assert result.models_under_test[0]["name"] == "Alpha 1 | α"
    for name in TABLES:
        assert "| Alpha 1 &#124; α |" in RENDERERS["md"][1](result, name)
        assert RENDERERS["csv"][1](result, name).splitlines()[1].startswith("Alpha 1 | α,")
        assert r"Alpha 1 | α & " in RENDERERS["latex"][1](result, name)
        assert f"| {BETA} |" in RENDERERS["md"][1](result, name)
    assert "| Alpha 1 &#124; α | 2025-01-01 | 1 |" in render_setup(result, "table2_models", "md")
    summary = result.summary()
    assert summary["display_names"][ALPHA] == "Alpha 1 | α" and ALPHA in summary["models"]


def test_grid_cells_of_a_named_model_carry_r_and_c(tmp_path: Path) -> None:
    base = main_spec().models[ALPHA]
    spec = RunSpec(n=3, models={"vendor-a/alpha::r5::c4": base, "vendor-a/alpha::r3::c2": base})
    run = write_run(tmp_path, with_names(spec, {"vendor-a/alpha": "Alpha"}))
    result = analyze_run(run, bootstrap_samples=0)
    assert list(result.display_names.values()) == ["Alpha (R=5, C=4)", "Alpha (R=3, C=2)"]
    assert [r["name"] for r in result.models_under_test] == ["Alpha"]  # one row per real model


def test_explicit_names_replace_the_recorded_ones(tmp_path: Path) -> None:
    run = write_run(tmp_path, with_names(main_spec(), {"vendor-a/alpha": "Recorded"}))
    result = analyze_run(run, bootstrap_samples=0, display_names={"vendor-b/beta": "Beta"})
    assert result.display_names == {ALPHA: ALPHA, BETA: "Beta"}


def test_a_name_equal_to_another_models_slug_is_refused(tmp_path: Path) -> None:
    spec = RunSpec(n=1, models={"plain-a": {"q1": [ok("A")]}, "plain-b": {"q1": [FAIL]}})
    run = write_run(tmp_path, spec)
    with pytest.raises(AnalysisError, match="would both be shown as 'plain-b'"):
        analyze_run(run, bootstrap_samples=0, display_names={"plain-a": "plain-b"})


@pytest.mark.parametrize(
    ("snapshot", "message"),
    [
        (named({"vendor-a/alpha": "A", "vendor-b/beta": "A"}), "are all named 'A'"),
        (json.dumps({"analysis": {"display_names": ["A"]}}), "expected a JSON object"),
        (json.dumps({"analysis": {"display_names": {"vendor-a/alpha": 1}}}), "is not a string"),
    ],
)
def test_a_malformed_recorded_name_mapping_is_named(tmp_path: Path, snapshot: str, message: str) -> None:
    run = write_run(tmp_path, replace(main_spec(), snapshots={ALPHA: snapshot}))
    with pytest.raises(AnalysisError, match=message) as info:
        analyze_run(run, bootstrap_samples=0)
    assert "run_meta.config_snapshot analysis.display_names" in str(info.value)


def test_a_snapshot_without_names_names_nothing(tmp_path: Path) -> None:
    run = write_run(tmp_path, replace(main_spec(), snapshots={ALPHA: '{"analysis": {}}', BETA: "{}"}))
    assert analyze_run(run, bootstrap_samples=0).display_names == {ALPHA: ALPHA, BETA: BETA}


def test_setup_tables_go_through_the_writer_in_every_format(main_run: Path, tmp_path: Path) -> None:
    result = analyze_run(main_run, bootstrap_samples=0)
    write_analysis(result, tmp_path / "out", "all", plots=False)
    for name in SETUP_TABLES:
        for suffix, fmt in ((".md", "md"), (".csv", "csv"), (".tex", "latex")):
            text = (tmp_path / "out" / f"{name}{suffix}").read_text(encoding="utf-8")
            assert text == render_setup(result, name, fmt)


def test_verify_regenerates_a_named_analysis_byte_for_byte(tmp_path: Path) -> None:
    run = write_run(tmp_path, with_names(main_spec(), {"vendor-a/alpha": "Alpha"}))
    settings = AnalysisSettings.from_values({"bootstrap_samples": 20})
    write_analysis(analyze_run(run, bootstrap_samples=20, seed=settings.seed), run / "analysis")
    assert "| Alpha |" in (run / "analysis" / "table3_overall.md").read_text(encoding="utf-8")
    checks = check_analysis(run, run / "analysis", settings)
    assert checks and all(c.ok for c in checks), [c for c in checks if not c.ok]


def _cli(*args: Any) -> Any:
    return CliRunner().invoke(cli, ["report", *map(str, args), "--bootstrap", "0"])


def test_report_names_file(main_run: Path, tmp_path: Path) -> None:
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"vendor-b/beta": "Beta 2", "vendor-z/typo": "Z"}), encoding="utf-8")
    out = tmp_path / "out"
    result = _cli(main_run, "--names", names, "--out", out, "--format", "md")
    assert result.exit_code == 0, result.output
    assert "| Beta 2 |" in result.stdout
    assert "note: --names names 'vendor-z/typo', which is no model of this run" in result.stderr
    assert "| Beta 2 | 2025-01-01 | 1 |" in (out / "table2_models.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist; --names takes a JSON object"),
        ("{", "is not valid JSON"),
        ('["a"]', 'e.g. {"vendor/model-x": "Model X"}, got a JSON list'),
        ('{"a/b::r5::c4": "X"}', "name the real model slug, without '::rR::cC'"),
        ('{"a": "X", "b": "X"}', "'a', 'b' are all named 'X'"),
        ('{"a": "two\\nlines"}', "holds a line break or control character"),
        ('{"a": " X"}', "starts or ends with a space"),
        ('{"a": 3}', "the display name of 'a' is not a string"),
    ],
)
def test_report_refuses_a_bad_names_file(
    main_run: Path, tmp_path: Path, content: str | None, message: str
) -> None:
    names = tmp_path / "names.json"
    if content is not None:
        names.write_text(content, encoding="utf-8")
    result = _cli(main_run, "--names", names)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert not (main_run / "analysis").exists()
