"""Every report states the answer-parser mode (ANSWER_PARSER) the run's letters were parsed with."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builder import RunSpec, ok, write_run
from click.testing import CliRunner
from conftest import ALPHA, BETA, main_spec

from oracleproto.analysis.report import analyze_run
from oracleproto.analysis.tables import render_csv, render_latex, render_markdown
from oracleproto.cli.main import cli
from oracleproto.errors import AnalysisError


def ours(**react: str) -> str:
    """An oracleproto snapshot (one object per section); ``react`` holds the react fields given."""
    return json.dumps({"llm": {"temperature": 0.7}, "react": {"max_steps": 6, **react}})


def spec_with(snapshots: dict[str, str | None]) -> RunSpec:
    spec = main_spec()
    spec.snapshots.update(snapshots)
    return spec


@pytest.mark.parametrize(
    ("snapshot", "mode"),
    [
        (ours(answer_parser="strict"), "strict"),
        (ours(answer_parser="algorithm2"), "algorithm2"),
        # oracleproto before the setting existed had only the strict rule.
        (ours(), "strict"),
        # The earlier implementation's flat snapshot: the paper's Algorithm 2 unless it says otherwise.
        (json.dumps({"MODELS": "vendor-a/alpha", "LLM_TEMPERATURE": "0.7"}), "algorithm2"),
        (json.dumps({"MODELS": "vendor-a/alpha", "ANSWER_PARSER": "strict"}), "strict"),
        ("{}", "algorithm2"),
        (None, "algorithm2"),
    ],
)
def test_the_recorded_mode_is_in_the_summary_and_every_table(
    tmp_path: Path, snapshot: str | None, mode: str
) -> None:
    run = write_run(tmp_path, spec_with({ALPHA: snapshot, BETA: snapshot}))
    result = analyze_run(run, bootstrap_samples=0)
    summary = result.summary()
    assert summary["answer_parser"] == mode
    assert {summary["models"][slug]["answer_parser"] for slug in (ALPHA, BETA)} == {mode}
    markdown = render_markdown(result, "table3_overall")
    assert f"Convention: `paper` · answer parser: `{mode}`" in markdown.splitlines()
    csv_lines = render_csv(result, "table4_buckets").splitlines()
    assert csv_lines[0].endswith(",convention,answer_parser")
    assert all(line.endswith(f",paper,{mode}") for line in csv_lines[1:])
    latex = render_latex(result, "table5_consistency")
    assert f"% oracleproto analysis, convention: paper, answer parser: {mode}" in latex
    assert rf"(convention: \texttt{{paper}}; answer parser: \texttt{{{mode}}})" in latex


def test_models_parsed_differently_are_mixed_and_noted(tmp_path: Path) -> None:
    run = write_run(
        tmp_path, spec_with({ALPHA: ours(answer_parser="strict"), BETA: ours(answer_parser="algorithm2")})
    )
    result = analyze_run(run, bootstrap_samples=0)
    assert result.answer_parser == "mixed"
    assert result.models[ALPHA]["answer_parser"] == "strict"
    assert result.models[BETA]["answer_parser"] == "algorithm2"
    assert any(
        "different ANSWER_PARSER modes" in note and f"{ALPHA}: strict" in note for note in result.notes
    )
    csv_rows = render_csv(result, "table3_overall").splitlines()[1:]
    assert [row.rsplit(",", 1)[1] for row in csv_rows] == ["strict", "algorithm2"]


@pytest.mark.parametrize(
    ("snapshot", "needle"),
    [
        (ours(answer_parser="lenient"), "the recorded ANSWER_PARSER is 'lenient', not algorithm2 or strict"),
        ("{not json", "run_meta.config_snapshot is not valid JSON"),
        ("[1, 2]", "run_meta.config_snapshot must be a JSON object, not list"),
    ],
)
def test_an_unreadable_mode_is_a_clear_analysis_error(tmp_path: Path, snapshot: str, needle: str) -> None:
    run = write_run(tmp_path, spec_with({BETA: snapshot}))
    with pytest.raises(AnalysisError) as info:
        analyze_run(run, bootstrap_samples=0)
    message = str(info.value)
    assert needle in message
    assert str(run / "db") in message


def test_report_prints_the_mode_on_the_terminal(tmp_path: Path) -> None:
    run = write_run(
        tmp_path, spec_with({ALPHA: ours(answer_parser="strict"), BETA: ours(answer_parser="strict")})
    )
    result = CliRunner().invoke(cli, ["report", str(run), "--bootstrap", "0", "--format", "md"])
    assert result.exit_code == 0, result.output
    # one line per table: performance, counts, per-bucket, pairwise tests
    assert result.stdout.count("Convention: `paper` · answer parser: `strict`") == 4


def test_a_hedge_stored_by_algorithm2_scores_wrong(tmp_path: Path) -> None:
    # q4 is single-answer with gold C: a stored {B, C} is parsed, wrong, and earns no exam credit.
    spec = RunSpec(n=1, models={ALPHA: {"q4": [ok("B,C")], "q5": [ok("A")]}})
    spec.snapshots[ALPHA] = ours(answer_parser="algorithm2")
    entry = analyze_run(write_run(tmp_path, spec), bootstrap_samples=0).models[ALPHA]
    assert entry["evaluability_rate"] == 1.0 and entry["parse_failure_rate"] == 0.0
    assert entry["exam_avg"]["mc_single"] == pytest.approx(0.5)
    assert entry["pass_at_1_avg"] == pytest.approx(0.5)
