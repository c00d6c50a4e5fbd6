"""Issue 28 §1 (c): one TEXT cell of a run DB that is not UTF-8 blocks nothing whole.

A copy of the hostile run gets one damaged cell at a time; each command then completes, or
refuses with a message naming the file, the row and the column (never "not a SQLite database",
never a traceback). ``audit sample`` skips the one test item it cannot read and says which.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from oracleproto.store.dump import logical_dump
from tests.unicode.cli import Outcome, oracleproto
from tests.unicode.recording import HostileRun

pytestmark = pytest.mark.slow

BAD = b'{"a": "\xff\xfe"}'
DB = "db/sim__careful__r5__c4.db"


def _damaged_copy(run: HostileRun, tmp: Path, table: str, column: str, where: str) -> Path:
    copy = tmp / "runs" / run.run_dir.name
    shutil.copytree(run.run_dir, copy)
    con = sqlite3.connect(copy / DB)
    con.execute(f"UPDATE {table} SET {column} = CAST(? AS TEXT) WHERE {where}", (BAD,))
    con.commit()
    con.close()
    return copy


def _named(outcome: Outcome, *parts: str) -> bool:
    """A refusal (exit 2) whose message names the damaged cell, its file and the fix."""
    return (
        outcome.code == 2
        and all(part in outcome.output for part in parts)
        and "not UTF-8 text" in outcome.output
        and "restore this file" in outcome.output
    )


def test_a_damaged_trajectory_cell_costs_one_audit_item(hostile_run: HostileRun, tmp_path: Path) -> None:
    run = _damaged_copy(hostile_run, tmp_path, "run_results", "s1_messages_trace", "question_id = 'demo-09'")
    outcomes = {
        "export": oracleproto("export", run, "--out", tmp_path / "export.jsonl"),
        "view": oracleproto("view", run, "--out", tmp_path / "view.html", "--quiet"),
        "audit sample": oracleproto("audit", "sample", run, "--out", tmp_path / "audit", "--per-item", "20"),
    }
    for name, outcome in outcomes.items():
        assert outcome.clean and outcome.code == 0, f"{name}: {outcome.describe()}"
    skipped = outcomes["audit sample"].output
    assert "skipped a test item whose stored sample cannot be read" in skipped
    assert "question 'demo-09' sample 1, column s1_messages_trace: not UTF-8 text (byte 7)" in skipped
    meta = (tmp_path / "audit" / "audit.json").read_text(encoding="utf-8")
    assert '"test_items_unreadable": 1' in meta
    assert '"question_id": "demo-09"' in meta
    # The logical dump replay compares shows the bytes instead of failing as "not a database".
    assert '{"invalid_utf8_hex":"7b2261223a2022fffe227d"}' in logical_dump(run / DB)


def test_a_damaged_cell_the_metrics_need_is_named(hostile_run: HostileRun, tmp_path: Path) -> None:
    run = _damaged_copy(hostile_run, tmp_path, "run_results", "s0_search_calls", "question_id = 'demo-06'")
    for command in (("report", run, "--out", tmp_path / "r"), ("export", run, "--out", tmp_path / "e")):
        outcome = oracleproto(*command)
        assert outcome.clean, outcome.describe()
        assert _named(outcome, "table run_results, question_id 'demo-06', column s0_search_calls"), (
            outcome.describe()
        )
    verified = oracleproto("verify", run, "--dataset", hostile_run.dataset, "--quiet")
    assert verified.clean and verified.code == 1, verified.describe()
    assert "column s0_search_calls: not UTF-8 text" in verified.output
    sampled = oracleproto("audit", "sample", run, "--out", tmp_path / "audit")
    assert sampled.clean and sampled.code == 0, sampled.describe()
    assert "question 'demo-06' sample 0, column s0_search_calls: not UTF-8 text" in sampled.output


def test_a_damaged_question_or_run_meta_cell_is_named(hostile_run: HostileRun, tmp_path: Path) -> None:
    questions = _damaged_copy(hostile_run, tmp_path / "q", "questions", "event", "id = 'demo-08'")
    outcome = oracleproto("report", questions, "--out", tmp_path / "r")
    assert outcome.clean and _named(outcome, "table questions, id 'demo-08', column event"), (
        outcome.describe()
    )
    meta = _damaged_copy(hostile_run, tmp_path / "m", "run_meta", "filters_snapshot", "1")
    for command in (
        ("report", meta, "--out", tmp_path / "r2"),
        ("audit", "sample", meta, "--out", tmp_path / "a"),
    ):
        outcome = oracleproto(*command)
        assert outcome.clean and _named(outcome, "run_meta", "column filters_snapshot"), outcome.describe()
