"""Building source DBs from JSONL/CSV: validation first, atomic, byte-for-byte deterministic."""

from __future__ import annotations

import csv
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from oracleproto.dataset.builder import build_dataset, build_demo_dataset
from oracleproto.dataset.demo import demo_db_path, demo_templates
from oracleproto.dataset.hashes import source_db_hash
from oracleproto.dataset.loader import load_questions, load_templates, read_features_json, validate_db
from oracleproto.dataset.validation import COLUMNS
from oracleproto.errors import DatasetError

RowFactory = Callable[..., dict[str, object]]


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(COLUMNS))
        writer.writeheader()
        writer.writerows(rows)
    return path


def sample_rows(row: RowFactory) -> list[dict[str, object]]:
    return [
        row(id="z9", end_time="2026-03-05"),
        row(id="a1", choice_type="multi", answer="C,A", end_time="2026-03-05T21:00:00+08:00"),
        row(id="m5", question_type="yes_no", options=["Yes", "No"], answer="B", end_time="2026-03-01"),
    ]


def problems(exc: pytest.ExceptionInfo[DatasetError]) -> list[str]:
    return [str(p) for p in exc.value.problems]


def test_two_builds_are_byte_identical(
    tmp_path: Path, row: RowFactory, templates_mapping: dict[str, str]
) -> None:
    src = write_jsonl(tmp_path / "rows.jsonl", sample_rows(row))
    first = build_dataset(src, tmp_path / "one.db", templates=templates_mapping)
    second = build_dataset(src, tmp_path / "two.db", templates=templates_mapping)
    assert (tmp_path / "one.db").read_bytes() == (tmp_path / "two.db").read_bytes()
    assert first.source_db_hash == second.source_db_hash == source_db_hash(tmp_path / "one.db")


def test_row_order_in_the_input_does_not_matter(
    tmp_path: Path, row: RowFactory, templates_mapping: dict[str, str]
) -> None:
    rows = sample_rows(row)
    a = write_jsonl(tmp_path / "rows.jsonl", rows)
    (tmp_path / "b").mkdir()
    b = write_jsonl(tmp_path / "b" / "rows.jsonl", rows[::-1])
    build_dataset(a, tmp_path / "a.db", templates=templates_mapping)
    build_dataset(b, tmp_path / "b.db", templates=templates_mapping)
    with sqlite3.connect(tmp_path / "a.db") as ca, sqlite3.connect(tmp_path / "b.db") as cb:
        query = "SELECT * FROM questions ORDER BY rowid"
        assert ca.execute(query).fetchall() == cb.execute(query).fetchall()


def test_built_db_round_trips_and_is_normalised(
    tmp_path: Path, row: RowFactory, templates_mapping: dict[str, str]
) -> None:
    src = write_jsonl(tmp_path / "rows.jsonl", sample_rows(row))
    out = tmp_path / "built.db"
    result = build_dataset(src, out, templates=templates_mapping)
    assert (result.table, result.row_count) == ("questions", 3)
    assert [q.id for q in load_questions(out)] == ["m5", "a1", "z9"]
    assert load_templates(out).as_dict() == templates_mapping
    with sqlite3.connect(out) as conn:
        stored = conn.execute("SELECT id, options, answer, end_time FROM questions ORDER BY rowid").fetchall()
        meta = conn.execute("SELECT * FROM dataset_metadata").fetchall()
        schema = [r[0] for r in conn.execute("SELECT name FROM sqlite_master ORDER BY name")]
    assert stored == [
        ("m5", '["Yes", "No"]', "B", "2026-03-01"),
        ("a1", '["Red", "Green", "Blue"]', "A, C", "2026-03-05"),
        ("z9", '["Red", "Green", "Blue"]', "B", "2026-03-05"),
    ]
    (name, split, table, count, imported_at, features_text) = meta[0]
    assert (name, split, table, count, imported_at) == (
        "questions",
        "eval",
        "questions",
        3,
        "2026-03-05T00:00:00Z",
    )
    assert "idx_questions_end_time" in schema and "sqlite_autoindex_questions_1" in schema
    features = json.loads(features_text)
    assert features["row_counts"]["by_question_type"] == {
        "yes_no": 1,
        "binary_named": 0,
        "multiple_choice": 2,
        "total": 3,
    }
    assert features["end_time_range"] == {
        "min": "2026-03-01",
        "max": "2026-03-05",
        "timezone": "Asia/Shanghai",
    }
    assert features["provenance"]["source_sha256"] == source_db_hash(src)
    assert validate_db(out).ok


def test_schema_checks_reject_bad_values(tmp_path: Path, row: RowFactory) -> None:
    out = tmp_path / "built.db"
    build_dataset(write_jsonl(tmp_path / "rows.jsonl", [row()]), out)
    with sqlite3.connect(out) as conn, pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        conn.execute("UPDATE questions SET question_type = 'essay'")


def test_csv_and_jsonl_give_the_same_rows(tmp_path: Path, row: RowFactory) -> None:
    rows = sample_rows(row)
    rows[2]["options"] = json.dumps(rows[2]["options"])
    build_dataset(write_jsonl(tmp_path / "rows.jsonl", rows), tmp_path / "j.db")
    build_dataset(write_csv(tmp_path / "rows.csv", rows), tmp_path / "c.db")
    assert load_questions(tmp_path / "j.db") == load_questions(tmp_path / "c.db")


def test_options_imported_at_and_names(tmp_path: Path, row: RowFactory) -> None:
    out = tmp_path / "built.db"
    src = write_jsonl(tmp_path / "rows.jsonl", [row()])
    build_dataset(src, out, table="forecast_set", dataset_name="demo", imported_at_utc="2026-05-01T12:00:00Z")
    with sqlite3.connect(out) as conn:
        assert conn.execute(
            "SELECT dataset_name, table_name, imported_at_utc FROM dataset_metadata"
        ).fetchone() == (
            "demo",
            "forecast_set",
            "2026-05-01T12:00:00Z",
        )
    assert [q.id for q in load_questions(out, table="forecast_set")] == ["q1"]


def test_existing_output_is_refused_unless_forced(tmp_path: Path, row: RowFactory) -> None:
    src = write_jsonl(tmp_path / "rows.jsonl", [row()])
    out = tmp_path / "out.db"
    out.write_bytes(b"keep me")
    with pytest.raises(DatasetError) as exc:
        build_dataset(src, out)
    assert problems(exc) == [f"dataset, column 'file': {out} already exists; pass --force to overwrite it"]
    assert out.read_bytes() == b"keep me"
    build_dataset(src, out, force=True)
    assert [q.id for q in load_questions(out)] == ["q1"]


def test_bad_rows_leave_no_output(tmp_path: Path, row: RowFactory) -> None:
    src = write_jsonl(tmp_path / "rows.jsonl", [row(id="a", answer="Q"), row(id="b", end_time="x")])
    out = tmp_path / "out.db"
    with pytest.raises(DatasetError) as exc:
        build_dataset(src, out)
    assert problems(exc) == [
        "row 'a', column 'answer': answer letter(s) Q outside the options: 3 options allow A..C",
        "row 'b', column 'end_time': end_time 'x' is not a date; expected YYYY-MM-DD or an ISO 8601 datetime",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.jsonl"]


def test_jsonl_structure_problems(tmp_path: Path, row: RowFactory) -> None:
    src = tmp_path / "rows.jsonl"
    src.write_text(
        json.dumps(row()) + "\n\n{oops\n[1]\n" + json.dumps(row(id="q2", end_date="2026-03-01")) + "\n"
    )
    with pytest.raises(DatasetError) as exc:
        build_dataset(src, tmp_path / "out.db")
    assert problems(exc) == [
        "row 'line 3', column 'json': "
        "not valid JSON (Expecting property name enclosed in double quotes at char 1)",
        "row 'line 4', column 'json': expected a JSON object, got list",
        "row 'line 5', column 'end_date': unknown column 'end_date'; expected only id, choice_type, "
        "question_type, event, options, answer, end_time",
    ]


def test_csv_header_problems(tmp_path: Path) -> None:
    src = tmp_path / "rows.csv"
    src.write_text("id,choice_type,question_type,event,options,answer,resolves\n")
    with pytest.raises(DatasetError) as exc:
        build_dataset(src, tmp_path / "out.db")
    assert problems(exc) == [
        "row 'header', column 'resolves': unknown column 'resolves'; expected only id, choice_type, "
        "question_type, event, options, answer, end_time",
        "row 'header', column 'end_time': missing column in the CSV header",
    ]


def test_csv_row_with_too_many_fields(tmp_path: Path, row: RowFactory) -> None:
    src = write_csv(tmp_path / "rows.csv", [row()])
    with src.open("a", encoding="utf-8") as handle:
        handle.write('q2,single,yes_no,E,"[""Yes"", ""No""]",A,2026-03-01,extra\n')
    with pytest.raises(DatasetError) as exc:
        build_dataset(src, tmp_path / "out.db")
    assert problems(exc) == ["row 'line 3', column 'csv': more fields than header columns"]


def test_input_file_problems(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as exc:
        build_dataset(tmp_path / "rows.txt", tmp_path / "out.db")
    assert problems(exc) == [
        "dataset, column 'file': unknown input format '.txt'; use .jsonl, .ndjson or .csv"
    ]
    with pytest.raises(DatasetError) as exc:
        build_dataset(tmp_path / "absent.jsonl", tmp_path / "out.db")
    assert problems(exc) == ["dataset, column 'file': no such file"]
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(DatasetError) as exc:
        build_dataset(tmp_path / "empty.jsonl", tmp_path / "out.db")
    assert problems(exc) == [
        "dataset, column 'rows': the input holds no rows; a dataset needs at least one question"
    ]


def test_template_and_table_problems(
    tmp_path: Path, row: RowFactory, templates_mapping: dict[str, str]
) -> None:
    del templates_mapping["guidance"]
    src = write_jsonl(tmp_path / "rows.jsonl", [row()])
    with pytest.raises(DatasetError) as exc:
        build_dataset(src, tmp_path / "out.db", templates=templates_mapping, table="my table")
    assert problems(exc) == [
        "dataset, column 'table': table name 'my table' must be a plain identifier ([A-Za-z_][A-Za-z0-9_]*) "
        "other than 'dataset_metadata'",
        "dataset, column 'templates': prompt_reconstruction is missing template key 'guidance'",
    ]


def test_packaged_demo_db_is_reproduced_byte_for_byte(tmp_path: Path) -> None:
    rebuilt = build_demo_dataset(tmp_path / "demo.db")
    assert rebuilt.path.read_bytes() == demo_db_path().read_bytes(), (
        "oracleproto/data/demo.db is stale: rebuild it with "
        "build_demo_dataset('oracleproto/data/demo.db', force=True) and commit it"
    )


def test_default_templates_are_the_demo_templates(tmp_path: Path, row: RowFactory) -> None:
    out = tmp_path / "out.db"
    build_dataset(write_jsonl(tmp_path / "rows.jsonl", [row()]), out)
    assert load_templates(out).as_dict() == demo_templates()
    assert json.loads(read_features_json(out))["prompt_reconstruction"] == demo_templates()
