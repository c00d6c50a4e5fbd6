"""``oracleproto report --convention points-f1``: files, defaults, refusals, and the sealed run."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from builder import Q, RunSpec, ok, write_run
from click.testing import CliRunner

from oracleproto.analysis.conventions import parse_convention
from oracleproto.cli.main import cli
from oracleproto.errors import AnalysisError
from oracleproto.verify.demo import find_demo_run

ONE, TWO = "vendor-a/one::r5::c4", "vendor-b/two::r5::c4"
QUESTIONS = (
    Q("y1", "yes_no", "single", ("Yes", "No"), "A"),
    Q("y2", "yes_no", "single", ("Yes", "No"), "B"),
    Q("m1", "multiple_choice", "multi", ("w", "x", "y", "z"), "A, C"),
)
FILES = {
    "score_summary.csv",
    "score_by_type.csv",
    "score_pairs.csv",
    "score_ranks.csv",
    "selection_diagnostics.csv",
    "score_summary.md",
    "summary.json",
}


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    """ONE: y1 right ×3, y2 right ×3, m1 {A} ×3 (2/3); TWO: everything wrong (m1 {B}: 0).

    ONE earns 1 + 1 + 3·2/3 = 4 of 5 points (80); TWO 0.
    """
    one = {"y1": [ok("A")] * 3, "y2": [ok("B")] * 3, "m1": [ok("A")] * 3}
    two = {"y1": [ok("B")] * 3, "y2": [ok("A")] * 3, "m1": [ok("B")] * 3}
    return write_run(tmp_path, RunSpec(n=3, models={ONE: one, TWO: two}, questions=QUESTIONS))


def test_writes_the_files_to_out_and_prints_the_table(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "pf1"
    result = CliRunner().invoke(cli, ["report", str(run_dir), "--convention", "points-f1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "| vendor-a/one::r5::c4 | 80.00 |" in result.stdout
    assert "| vendor-b/two::r5::c4 | 0.00 |" in result.stdout
    assert {p.name for p in out.iterdir()} == FILES | {".oracleproto-points-f1"}
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["convention"] == "points-f1"
    block = summary["points_f1"]
    assert block["bootstrap"]["iterations"] == 2000 and block["bootstrap"]["seed"] == 20261001
    assert block["models"][ONE]["score"] == 80.0
    # TWO is below ONE on both yes/no questions and m1 in every resample: Δ > 0 always.
    pair = next(csv.DictReader(io.StringIO((out / "score_pairs.csv").read_text(encoding="utf-8"))))
    assert (pair["delta_score_pp"], pair["p_value"]) == ("80.0", str(round(2 / 2001, 6)))
    assert (pair["significant_bh"], pair["significant_holm"]) == ("true", "true")
    assert not (run_dir / "analysis").exists()


def test_without_out_writes_beside_the_analysis_and_survives_its_rewrite(run_dir: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(cli, ["report", str(run_dir), "--bootstrap", "20"]).exit_code == 0
    before = {p.name: p.read_bytes() for p in (run_dir / "analysis").iterdir() if p.is_file()}
    result = runner.invoke(cli, ["report", str(run_dir), "--convention", "points-f1", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert f"wrote 7 file(s) to {run_dir / 'analysis' / 'points-f1'}" in result.stderr
    assert "bootstrap 0 × seed 20261001 differs from the contract's 2000 × 20261001" in result.stderr
    assert {p.name: p.read_bytes() for p in (run_dir / "analysis").iterdir() if p.is_file()} == before
    # The paper analysis rewritten: it keeps the points-f1 folder.
    assert runner.invoke(cli, ["report", str(run_dir), "--bootstrap", "20"]).exit_code == 0
    assert {p.name for p in (run_dir / "analysis" / "points-f1").iterdir()} >= FILES


def test_paper_only_options_are_named(run_dir: Path, tmp_path: Path) -> None:
    args = ["report", str(run_dir), "--convention", "points-f1", "--out", str(tmp_path / "o"), "--ci"]
    result = CliRunner().invoke(cli, [*args, "--bootstrap", "0", "--decimals", "2"])
    assert result.exit_code == 0, result.output
    assert "note: --decimals, --ci shape the paper's tables and do nothing under points-f1" in result.stderr


def test_refuses_a_foreign_output_folder(run_dir: Path, tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    args = ["report", str(run_dir), "--convention", "points-f1", "--out", str(foreign)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert "is not a points-f1 output directory: choose an empty or new --out" in result.stderr
    assert (foreign / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_points_f1_is_no_convention_of_the_analysis_pass() -> None:
    with pytest.raises(
        AnalysisError, match="it is a report of its own, `oracleproto report RUN --convention"
    ):
        parse_convention("points-f1")


def test_the_sealed_demo_still_verifies_with_a_points_f1_report_beside_it(tmp_path: Path) -> None:
    demo = tmp_path / "runs" / find_demo_run().name
    shutil.copytree(find_demo_run(), demo)
    runner = CliRunner()
    assert runner.invoke(cli, ["report", str(demo), "--convention", "points-f1"]).exit_code == 0
    verified = runner.invoke(cli, ["verify", str(demo)])
    assert verified.exit_code == 0, verified.output
    assert "skip  analysis/points-f1/" in verified.stdout
