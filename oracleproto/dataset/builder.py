"""Build a source DB from JSONL/CSV rows (the paper's Algorithm 3), byte-for-byte deterministic.

Identical input gives an identical file: rows are normalised and sorted, ``imported_at_utc``
is derived from the input (not the wall clock), ``features_json`` is written with sorted keys,
and the file is written once into a fresh temp file and renamed into place.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from oracleproto.dataset.demo import (
    DEMO_DATASET_NAME,
    DEMO_DESCRIPTION,
    DEMO_TABLE,
    demo_questions_path,
    demo_templates,
)
from oracleproto.dataset.hashes import source_db_hash
from oracleproto.dataset.info import summarize
from oracleproto.dataset.loader import METADATA_TABLE
from oracleproto.dataset.models import Question
from oracleproto.dataset.rows import read_rows
from oracleproto.dataset.validation import validate_rows, validate_templates
from oracleproto.errors import DatasetError, DatasetProblem
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.primitives.oserrors import cannot_write

SCHEMA_VERSION = "v1.0"
_IDENTIFIER_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

#: Our own description of the seven columns, stored in ``features_json.columns``.
COLUMN_DOCS: dict[str, str] = {
    "id": "Unique question identifier; join key of the per-sample results.",
    "choice_type": "'single' (exactly one correct letter) or 'multi' (one or more correct letters).",
    "question_type": "'yes_no', 'binary_named' or 'multiple_choice'; picks the prompt output format.",
    "event": "The event to forecast, shown verbatim to the model.",
    "options": "JSON array of option labels; option i has letter chr(65 + i), so index 26 is '['.",
    "answer": "Correct letter(s) in option order, comma-separated ('A' or 'A, C'); used only for scoring.",
    "end_time": "Resolution date, YYYY-MM-DD; the prediction cutoff is end_time minus delta days.",
}
QUESTION_TYPE_DOCS: dict[str, str] = {
    "yes_no": "Two options, exactly ['Yes', 'No'].",
    "binary_named": "Two named alternatives (teams, candidates, sides).",
    "multiple_choice": "Two or more labelled options; single- or multi-answer.",
}


@dataclass(frozen=True)
class BuildResult:
    """What ``build_dataset`` wrote."""

    path: Path
    table: str
    row_count: int
    source_db_hash: str


def _create_sql(table: str) -> list[str]:
    return [
        f"""CREATE TABLE {table} (
    id            TEXT PRIMARY KEY,
    choice_type   TEXT NOT NULL CHECK (choice_type IN ('single','multi')),
    question_type TEXT NOT NULL CHECK (question_type IN ('yes_no','binary_named','multiple_choice')),
    event         TEXT NOT NULL,
    options       TEXT NOT NULL,
    answer        TEXT NOT NULL,
    end_time      TEXT NOT NULL
)""",
        *(
            f"CREATE INDEX idx_{table}_{col} ON {table}({col})"
            for col in ("choice_type", "question_type", "end_time")
        ),
        f"""CREATE TABLE {METADATA_TABLE} (
    dataset_name    TEXT NOT NULL,
    split_name      TEXT NOT NULL,
    table_name      TEXT NOT NULL,
    row_count       INTEGER NOT NULL,
    imported_at_utc TEXT NOT NULL,
    features_json   TEXT NOT NULL
)""",
    ]


def features_document(
    questions: list[Question],
    templates: Mapping[str, str],
    *,
    description: str,
    timezone: str,
    source_name: str,
    source_sha256: str,
) -> dict[str, Any]:
    """The ``features_json`` object: templates, row counts, date range, column docs, provenance."""
    table = summarize(questions).table()
    first, last = questions[0].end_time, questions[-1].end_time
    return {
        "schema_version": SCHEMA_VERSION,
        "description": description,
        "columns": COLUMN_DOCS,
        "question_types": QUESTION_TYPE_DOCS,
        "row_counts": {
            "by_question_type": {qt: cells["total"] for qt, cells in table.items()},
            "by_choice_type": dict(table["total"]),
            "by_question_type_and_choice_type": {
                f"{qt}/{ct}": n
                for qt, cells in table.items()
                if qt != "total"
                for ct, n in cells.items()
                if ct != "total"
            },
        },
        "end_time_range": {"min": first.isoformat(), "max": last.isoformat(), "timezone": timezone},
        "prompt_reconstruction": dict(templates),
        "provenance": {
            "builder": "oracleproto dataset build",
            "source_file": source_name,
            "source_sha256": source_sha256,
        },
    }


def _write(path: Path, table: str, questions: list[Question], metadata: tuple[object, ...]) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")
        for statement in _create_sql(table):
            conn.execute(statement)
        conn.executemany(
            f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    q.id,
                    q.choice_type,
                    q.question_type,
                    q.event,
                    json.dumps(list(q.options), ensure_ascii=False),
                    q.answer_text,
                    q.end_time.isoformat(),
                )
                for q in questions
            ],
        )
        conn.execute(f"INSERT INTO {METADATA_TABLE} VALUES (?, ?, ?, ?, ?, ?)", metadata)
        conn.execute("COMMIT")
    finally:
        conn.close()


def build_dataset(
    rows_path: Path | str,
    out_path: Path | str,
    *,
    templates: object = None,
    table: str = "questions",
    dataset_name: str | None = None,
    split_name: str = "eval",
    description: str = "Forecasting questions built with oracleproto.",
    timezone: str = "Asia/Shanghai",
    imported_at_utc: str | None = None,
    force: bool = False,
) -> BuildResult:
    """Validate rows + templates, then write a source DB atomically; ``DatasetError`` lists all problems.

    ``templates`` is the ``prompt_reconstruction`` mapping (``None``: the demo's own wording).
    ``imported_at_utc`` defaults to the latest resolution date at midnight UTC, a value derived
    from the input so that identical input gives an identical file.
    """
    source, out = Path(rows_path), Path(out_path)
    if templates is None:
        templates = demo_templates()
    problems: list[DatasetProblem] = []
    if not _IDENTIFIER_RE.match(table) or table == METADATA_TABLE:
        problems.append(
            DatasetProblem(
                None,
                "table",
                f"table name {table!r} must be a plain identifier "
                f"([A-Za-z_][A-Za-z0-9_]*) other than {METADATA_TABLE!r}",
            )
        )
    if out.exists() and not force:
        problems.append(DatasetProblem(None, "file", f"{out} already exists; pass --force to overwrite it"))
    if imported_at_utc is not None:
        problems.extend(_check_imported_at(imported_at_utc))
    raw_rows, row_problems = read_rows(source)
    questions, invalid = validate_rows(raw_rows)
    problems.extend(row_problems + invalid + validate_templates(templates, column="templates"))
    if not raw_rows and not row_problems:
        problems.append(
            DatasetProblem(None, "rows", "the input holds no rows; a dataset needs at least one question")
        )
    if problems:
        raise DatasetError(str(source), problems)
    template_map = cast(dict[str, str], templates)  # validate_templates proved: a dict of str → str
    features = features_document(
        questions,
        template_map,
        description=description,
        timezone=timezone,
        source_name=source.name,
        source_sha256=sha256_hex(source.read_bytes()),
    )
    stamp = imported_at_utc or f"{questions[-1].end_time.isoformat()}T00:00:00Z"
    metadata = (
        dataset_name or table,
        split_name,
        table,
        len(questions),
        stamp,
        json.dumps(features, ensure_ascii=False, sort_keys=True, indent=2),
    )
    try:
        write_db_atomically(out, table, questions, metadata)
    except OSError as exc:
        raise DatasetError(str(out), [DatasetProblem(None, "file", cannot_write(out, exc))]) from None
    except sqlite3.Error as exc:  # SQLITE_FULL / SQLITE_IOERR: the disk filled up mid-write
        raise DatasetError(
            str(out),
            [
                DatasetProblem(
                    None,
                    "file",
                    f"cannot write {out} ({exc}); the disk is full, read-only or past the file-size limit "
                    "(ulimit -f): free space, raise the limit or write elsewhere",
                )
            ],
        ) from None
    return BuildResult(out, table, len(questions), source_db_hash(out))


def write_db_atomically(
    out: Path, table: str, questions: list[Question], metadata: tuple[object, ...]
) -> None:
    """Write into a temp file beside ``out`` and rename it into place; nothing is left on failure."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        tmp.unlink()  # let SQLite create the file itself
        _write(tmp, table, questions, metadata)
        os.replace(tmp, out)
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-journal")):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()


def _check_imported_at(value: str) -> list[DatasetProblem]:
    """``--imported-at`` must be an ISO 8601 UTC date or timestamp (it is stored verbatim)."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
    if parsed is not None and parsed.tzinfo is not None and parsed.utcoffset() == timedelta(0):
        return []
    if parsed is not None and len(value) == 10:  # a plain date, YYYY-MM-DD
        return []
    why = "not an ISO 8601 date or timestamp" if parsed is None else "not in UTC (no 'Z' or '+00:00' offset)"
    return [
        DatasetProblem(
            None,
            "imported_at_utc",
            f"--imported-at {value!r} is {why}; use e.g. 2026-03-01T00:00:00Z or 2026-03-01",
        )
    ]


def build_demo_dataset(out_path: Path | str, *, force: bool = False) -> BuildResult:
    """Rebuild the packaged demo DB from its packaged sources (how ``data/demo.db`` is made)."""
    return build_dataset(
        demo_questions_path(),
        out_path,
        templates=demo_templates(),
        table=DEMO_TABLE,
        dataset_name=DEMO_DATASET_NAME,
        description=DEMO_DESCRIPTION,
        force=force,
    )
