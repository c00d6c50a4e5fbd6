"""Reading run directories: layout, NULL conventions, and clear errors for bad input."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from builder import EMPTY, RunSpec, ok, write_run
from conftest import ALPHA, main_spec

from oracleproto.analysis.conventions import parse_convention
from oracleproto.analysis.reader import read_run
from oracleproto.analysis.trials import TrialState
from oracleproto.errors import AnalysisError


def test_reads_states_and_letters(main_run: Path) -> None:
    run = read_run(main_run)
    assert [m.slug for m in run.models] == list(main_spec().models)
    alpha = run.models[0]
    assert alpha.real_slug == "vendor-a/alpha"
    assert alpha.file == "vendor-a__alpha__r5__c4.db"
    t = alpha.table
    assert t.question_ids == ("q1", "q2", "q3", "q4", "q5", "q6", "q7")
    assert t.state[1].tolist() == [TrialState.PARSED, TrialState.PARSE_FAIL, TrialState.CALL_ERROR]
    assert t.state[3, 2] == TrialState.EXCLUDED
    assert t.pred[5, 2, :5].tolist() == [True, True, False, False, False]  # "A,B"
    assert t.gold[6, :4].tolist() == [False, True, True, True]


def test_unwritten_slots_are_ignored(tmp_path: Path) -> None:
    spec = RunSpec(n=2, models={ALPHA: {"q1": [ok("A"), EMPTY]}})
    t = read_run(write_run(tmp_path, spec)).models[0].table
    assert t.state[0].tolist() == [TrialState.PARSED, TrialState.EMPTY]
    assert not t.counted[0, 1] and not t.eligible[0, 1]


def test_missing_run_dir(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError, match=r"does not exist: pass the directory holding manifest\.json"):
        read_run(tmp_path / "nope")


def test_missing_manifest(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError, match=r"manifest.json is missing: .* is not a run directory"):
        read_run(tmp_path)


def test_bad_manifest(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{", encoding="utf-8")
    with pytest.raises(AnalysisError, match="is not valid JSON"):
        read_run(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"run_id": "x"}), encoding="utf-8")
    with pytest.raises(
        AnalysisError, match="keys 'models' \\(list\\) and 'model_files' \\(object\\) are required"
    ):
        read_run(tmp_path)


def test_missing_db(main_run: Path) -> None:
    (main_run / "db" / "vendor-a__alpha__r5__c4.db").unlink()
    with pytest.raises(
        AnalysisError, match=r"is missing: manifest\.json lists model 'vendor-a/alpha::r5::c4'"
    ):
        read_run(main_run)


def test_missing_columns(tmp_path: Path) -> None:
    run = write_run(tmp_path, main_spec(), drop_column="s1_parse_ok")
    with pytest.raises(
        AnalysisError, match="table 'run_results' lacks 1 required column\\(s\\): s1_parse_ok"
    ):
        read_run(run)


def test_missing_table(main_run: Path) -> None:
    with sqlite3.connect(main_run / "db" / "vendor-a__alpha__r5__c4.db") as con:
        con.execute("DROP TABLE run_meta")
    with pytest.raises(AnalysisError, match="table 'run_meta' is missing"):
        read_run(main_run)


def test_letter_outside_options(main_run: Path) -> None:
    with sqlite3.connect(main_run / "db" / "vendor-a__alpha__r5__c4.db") as con:
        con.execute("""UPDATE run_results SET s0_final_answer_letters = '["E"]' WHERE question_id = 'q1'""")
    with pytest.raises(
        AnalysisError, match="question 'q1' sample 0 final_answer_letters: letter 'E' is outside"
    ):
        read_run(main_run)


def test_unknown_question_type(main_run: Path) -> None:
    with sqlite3.connect(main_run / "db" / "vendor-a__alpha__r5__c4.db") as con:
        con.execute("UPDATE questions SET question_type = 'numeric' WHERE id = 'q1'")
    with pytest.raises(AnalysisError, match="question 'q1' has question_type='numeric'"):
        read_run(main_run)


def test_unknown_convention() -> None:
    with pytest.raises(
        AnalysisError, match="unknown scoring convention 'v5': expected one of paper, reference-v4"
    ):
        parse_convention("v5")
