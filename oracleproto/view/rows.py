"""Read one model's SQLite as written (ours or the earlier implementation's) into plain sample records.

Read-only (``mode=ro``): the viewer must never create WAL files in a published run. Only the
columns a DB has are read, so DBs of older schema versions show what they hold. A text cell whose
bytes are not UTF-8 is read anyway (:func:`cell_text`): one damaged cell must not hide the run.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracleproto.errors import AnalysisError
from oracleproto.primitives.sqlite_readonly import connect_readonly
from oracleproto.store.schema import SAMPLE_ENTRIES_TABLE


@dataclass(frozen=True)
class ModelRows:
    """The rows of one per-model DB: questions, user prompts, sample cells, entry keys."""

    questions: dict[str, dict[str, Any]]
    prompts: dict[str, str | None]
    #: question id → sample index → {field: cell}, field without the ``s{i}_`` prefix.
    samples: dict[str, dict[int, dict[str, Any]]]
    #: (question id, sample) → cassette entry keys; None when the DB predates the record.
    entry_keys: dict[tuple[str, int], list[str]] | None
    run_meta: dict[str, Any]
    n: int


def cell_text(raw: bytes) -> str:
    """A TEXT cell as a string: its UTF-8, with each byte that is not UTF-8 kept as U+DC80+byte.

    (Python's surrogateescape.) The page shows such a character as that byte, marked; the JSON
    written into the page escapes it, so the file stays UTF-8.
    """
    return raw.decode("utf-8", "surrogateescape")


def json_or_none(text: Any) -> Any:
    """A JSON cell decoded; the text itself when it is not JSON; None for NULL."""
    if text is None:
        return None
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return text


def read_model_rows(db_path: Path, n: int) -> ModelRows:
    """Every row of ``db_path`` the viewer shows; AnalysisError when the DB cannot be read."""
    try:
        con = connect_readonly(db_path)
    except sqlite3.Error as exc:
        raise AnalysisError(f"{db_path}: cannot open SQLite database: {exc}") from exc
    try:
        con.row_factory = sqlite3.Row
        con.text_factory = cell_text
        meta_rows = con.execute("SELECT * FROM run_meta").fetchall()
        run_meta = dict(meta_rows[0]) if meta_rows else {}
        n = int(run_meta.get("sampling_n") or n)
        questions = {str(r["id"]): dict(r) for r in con.execute("SELECT * FROM questions")}
        columns = [r[1] for r in con.execute('PRAGMA table_info("run_results")')]
        prompts: dict[str, str | None] = {}
        samples: dict[str, dict[int, dict[str, Any]]] = {}
        for row in con.execute("SELECT * FROM run_results ORDER BY question_id"):
            qid = str(row["question_id"])
            prompts[qid] = row["user_prompt"] if "user_prompt" in columns else None
            per: dict[int, dict[str, Any]] = {}
            for i in range(n):
                prefix = f"s{i}_"
                per[i] = {c[len(prefix) :]: row[c] for c in columns if c.startswith(prefix)}
            samples[qid] = per
        keys = _entry_keys(con)
    except sqlite3.Error as exc:
        raise AnalysisError(f"{db_path}: cannot read: {exc}") from exc
    finally:
        con.close()
    return ModelRows(questions, prompts, samples, keys, run_meta, n)


def _entry_keys(con: sqlite3.Connection) -> dict[tuple[str, int], list[str]] | None:
    present = con.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SAMPLE_ENTRIES_TABLE,)
    ).fetchone()
    if present is None:
        return None
    out: dict[tuple[str, int], list[str]] = {}
    for qid, sample, keys in con.execute(
        f"SELECT question_id, sample, entry_keys FROM {SAMPLE_ENTRIES_TABLE}"
    ):
        decoded = json_or_none(keys)
        out[(str(qid), int(sample))] = [str(k) for k in decoded] if isinstance(decoded, list) else []
    return out
