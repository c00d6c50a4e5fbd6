"""FutureX-Past importer: the release's odd cases, Parquet shards, options and reports."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from syrupy.assertion import SnapshotAssertion

from oracleproto.dataset.importers import futurex
from oracleproto.dataset.importers.readers import read_records
from oracleproto.dataset.loader import load_questions
from tests.dataset.importers.support import FUTUREX, invoke, leftovers, read_report, run_import


def _rows(db: Path) -> dict[str, tuple[str, ...]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT id, choice_type, question_type, event, options, answer, end_time FROM questions"
        )
        return {r[0]: tuple(r[1:]) for r in rows}


def test_import_report_and_rows(tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    out = tmp_path / "fx.db"
    code, stdout, stderr = run_import("futurex", out)
    assert code == 0, stderr
    assert "import futurex-past: read 17, kept 10, dropped 7" in stdout
    report = read_report(out)
    assert report == snapshot(name="report")
    assert stdout.replace(str(tmp_path), "<tmp>") == snapshot(name="printed")
    rows = _rows(out)
    assert rows == snapshot(name="rows")
    # The odd cases, one by one.
    assert rows["fx-002"][2].startswith("[Fictional] Which districts")  # empty title: cut from the prompt
    assert rows["fx-002"][:1] == ("multi",) and rows["fx-002"][4:] == (
        "A, C",
        "2031-03-05",
    )  # datetime end_time
    assert rows["fx-003"][4] == "A, [, ^"  # labels past Z
    assert len(json.loads(rows["fx-003"][3])) == 30
    assert rows["fx-004"][4] == "C"  # a JSON string holding a Python list
    assert rows["fx-005"][1:2] == ("yes_no",) and rows["fx-005"][4:] == ("B", "2031-03-09")  # 'No', YYYY/M/D
    assert rows["fx-006"][4] == "B"  # option text matched case/whitespace-insensitively
    assert rows["fx-007"][1] == "binary_named" and json.loads(rows["fx-007"][3]) == [
        "Northshore Otters",
        "Eastbay Gulls",
    ]
    assert json.loads(rows["fx-013"][3]) == ["Rain", "Sun", "Fog"]  # "the outcome be" lead-in stripped
    assert rows["fx-017"][1] == "yes_no"  # Yes/No truth wins over the two \boxed{Yes}/\boxed{No}
    dropped = report["dropped_by_reason"]
    assert dropped["answer_none_of_the_above"]["first_ids"] == ["fx-008"]
    assert dropped["level_excluded"]["first_ids"] == ["fx-009", "fx-010"]
    assert report["warnings"] == [
        "row 'fx-014', column 'options': warning: options 1 and 3 are the same label 'J. Marr' "
        "(letters A and C still identify them)"
    ]


def test_levels_option_keeps_only_the_chosen_levels(tmp_path: Path) -> None:
    out = tmp_path / "l1.db"
    code, _, stderr = invoke("dataset", "import", "futurex-past", FUTUREX, out, "--levels", "1")
    assert code == 0, stderr
    assert {q.id for q in load_questions(out)} == {
        "fx-001", "fx-004", "fx-005", "fx-006", "fx-007", "fx-013", "fx-014", "fx-017",
    }  # fmt: skip
    assert read_report(out)["options"] == {"levels": [1], "choice_type_rule": "answers"}


def test_bad_levels_exit_2(tmp_path: Path) -> None:
    code, _, stderr = invoke(
        "dataset", "import", "futurex-past", FUTUREX, tmp_path / "x.db", "--levels", "one"
    )
    assert code == 2 and "--levels 'one' is not a comma-separated list" in stderr
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("['A','C']", ["A", "C"]),
        ('["B"]', ["B"]),
        ("\"['C']\"", ["C"]),
        ("No", ["No"]),
        (["A", "B"], ["A", "B"]),
        ("'Yes'", ["Yes"]),
        ("['\\\\']", ["\\"]),
        (None, None),
    ],
)
def test_parse_truth(value: object, expected: list[str] | None) -> None:
    assert futurex.parse_truth(value) == expected


def test_parse_options_runs_past_z_and_stops_at_the_instruction_block() -> None:
    labels = [f"o{i}" for i in range(33)]
    prompt = "Intro line.\n" + "\n".join(f"{chr(65 + i)}. {x}" for i, x in enumerate(labels))
    prompt += "\n        A. not an option: the indented instruction block\n        B. neither"
    assert futurex.parse_options(prompt) == tuple(labels)  # '[', '\\', ']', '^', '_', '`', 'a'


def test_event_from_prompt_handles_nested_parentheses() -> None:
    prompt = (
        'The event to be predicted: "Will it rain (in Calder)? (resolved around 2031-03-02 (GMT+8))."\nA. x'
    )
    assert futurex.event_from_prompt(prompt) == "Will it rain (in Calder)?"


def _parquet_from_fixture(path: Path) -> None:
    records = read_records(FUTUREX)
    # The real shards type ground_truth as text (a Python-list string) and level as an integer.
    for record in records:
        if isinstance(record["ground_truth"], list):
            record["ground_truth"] = repr(record["ground_truth"])
    pq.write_table(pa.Table.from_pylist(records), path)


def test_parquet_shards_import_like_the_jsonl_export(tmp_path: Path) -> None:
    shard = tmp_path / "train-00000-of-00001.parquet"
    _parquet_from_fixture(shard)
    assert run_import("futurex", tmp_path / "j.db")[0] == 0
    code, _, stderr = invoke(
        "dataset", "import", "futurex-past", shard, tmp_path / "p.db", "--min-end-date", "2031-01-01"
    )
    assert code == 0, stderr
    assert load_questions(tmp_path / "p.db") == load_questions(tmp_path / "j.db")


def test_unreadable_parquet_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    shard = tmp_path / "in" / "broken.parquet"
    shard.parent.mkdir()
    shard.write_bytes(b"PAR1 this is not a parquet file")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, stdout, stderr = invoke("dataset", "import", "futurex-past", shard, out_dir / "x.db")
    assert code == 2 and stdout == ""
    assert "not a readable Parquet file" in stderr and "Traceback" not in stderr
    assert leftovers(out_dir) == []


def test_missing_pyarrow_says_how_to_install_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shard = tmp_path / "s.parquet"
    _parquet_from_fixture(shard)
    real = __import__("importlib").import_module

    def no_pyarrow(name: str, *args: object) -> object:
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *args)

    monkeypatch.setattr("oracleproto.dataset.importers.readers.importlib.import_module", no_pyarrow)
    code, _, stderr = invoke("dataset", "import", "futurex-past", shard, tmp_path / "x.db")
    assert code == 2 and "pip install 'oracleproto[parquet]'" in stderr
