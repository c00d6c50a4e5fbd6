"""``leaderboard --audit``: each model's interval widened by its run's scored leakage audit.

A hand-written ``audit_summary.json`` (FN 0 of N 100) stands for a scored audit of the demo run;
at 0/N the Wilson upper bound is z²/(N + z²) exactly.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.analysis.leakage import read_audit
from oracleproto.cli.main import cli
from oracleproto.errors import AnalysisError
from oracleproto.leaderboard import build_leaderboard
from oracleproto.leakaudit.stats import Z_95
from tests.view.test_page import embedded

DEMO_RUN = "20260101-000000-de00"
U_0_OF_100 = Z_95**2 / (100 + Z_95**2)


def scored(folder: Path, run_id: str = DEMO_RUN) -> Path:
    """A scored audit folder: FN 0 of N 100 (40 caught leaks, 60 clean results)."""
    folder.mkdir(parents=True, exist_ok=True)
    summary = {"tp": 40, "tn": 60, "fp": 0, "fn": 0, "n": 100, "run_id": run_id}
    (folder / "audit_summary.json").write_text(json.dumps(summary), encoding="utf-8")
    (folder / "audit.json").write_text(json.dumps({"run_id": run_id, "parameters": {"models": None}}))
    return folder


def test_the_demo_board_with_an_audit(demo_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "board"
    result = CliRunner().invoke(
        cli,
        ["leaderboard", "demo", "--audit", str(scored(tmp_path / "audit")), "--out", str(out), "--no-views"],
    )
    assert result.exit_code == 0, result.output
    document = embedded((out / "leaderboard.html").read_text(encoding="utf-8"))
    (audit,) = document["leakage"]["audits"]
    assert (audit["run_id"], audit["fn"], audit["n"]) == (DEMO_RUN, 0, 100)
    assert audit["fn_rate_upper"] == round(U_0_OF_100, 6) == 0.036993
    rows = {r["slug"]: r for r in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text()))}
    for model in document["models"]:
        leak = model["leak"]
        # Every trial may have leaked at rate u: u·T trials, each worth at most its largest credit.
        assert leak["leaked_trials_bound"] == pytest.approx(leak["trials"] * U_0_OF_100, abs=1e-5)
        assert leak["loss_max"] > 0 and leak["ci_low"] < model["score_ci_low"]
        assert leak["score_low"] == pytest.approx(model["score"] - leak["loss_max"], abs=2e-6)
        row = rows[model["slug"]]
        assert (
            float(row["score_ci_leak_low"]) == leak["ci_low"]
            and float(row["leak_loss_max"]) == leak["loss_max"]
        )


def test_an_audit_of_another_run_and_two_audits_of_one_are_refused(demo_run: Path, tmp_path: Path) -> None:
    for audits, message in (
        (
            [scored(tmp_path / "other", "20991231-000000-ffff")],
            "was sampled from run 20991231-000000-ffff, which is not on this board (runs: "
            f"{DEMO_RUN}): attach each audit to the run it audits",
        ),
        (
            [scored(tmp_path / "a1"), scored(tmp_path / "a2")],
            f"two audits of run {DEMO_RUN} ({tmp_path / 'a1'} and {tmp_path / 'a2'}): give one",
        ),
    ):
        with pytest.raises(AnalysisError) as caught:
            build_leaderboard(
                [("demo", demo_run)], tmp_path / "board", audits=[read_audit(a) for a in audits], views=False
            )
        assert message in str(caught.value)
        assert not (tmp_path / "board").exists()
