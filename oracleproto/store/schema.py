"""Per-model SQLite schema (version 5, run-layout.md) and its one-pass migration.

``run_results`` is stored physically wide — one row per question, 24 ``s{i}_…`` columns per
sample — exactly as the existing layout, so existing readers and the paper's ``init_schema``
column-adding migration work unchanged (docs/design/record-replay.md, "Run store").
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from oracleproto.agent.result import SAMPLE_FIELDS
from oracleproto.errors import StoreError

SCHEMA_VERSION = 5
#: SQLite's default SQLITE_MAX_COLUMN; the wide table needs 2 + 24·n columns.
SQLITE_MAX_COLUMNS = 2000

#: SQL type of each per-sample column, in run-layout.md order.
SAMPLE_COLUMN_TYPES: dict[str, str] = {
    "final_answer_letters": "TEXT",
    "final_answer_raw": "TEXT",
    "correct": "INTEGER",
    "parse_ok": "INTEGER",
    "tool_calls_count": "INTEGER",
    "react_steps": "INTEGER",
    "prompt_tokens": "INTEGER",
    "completion_tokens": "INTEGER",
    "reasoning_tokens": "INTEGER",
    "latency_ms": "INTEGER",
    "messages_trace": "TEXT",
    "search_calls": "TEXT",
    "error": "TEXT",
    "created_at": "TEXT",
    "finish_reason": "TEXT",
    "nudges_used": "INTEGER",
    "step_metrics": "TEXT",
    "response_id": "TEXT",
    "system_fingerprint": "TEXT",
    "service_tier": "TEXT",
    "belief_final": "TEXT",
    "belief_trace": "TEXT",
    "belief_parse_ok": "INTEGER",
    "final_answer_retry_used": "INTEGER",
}
assert tuple(SAMPLE_COLUMN_TYPES) == SAMPLE_FIELDS, "column order must follow SampleResult"

RUN_META_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "TEXT"),
    ("model", "TEXT"),
    ("sampling_n", "INTEGER"),
    ("config_snapshot", "TEXT"),
    ("filters_snapshot", "TEXT"),
    ("source_db_hash", "TEXT"),
    ("metadata_hash", "TEXT"),
    ("prompt_templates_hash", "TEXT"),
    ("training_cutoff", "TEXT"),
    ("started_at", "TEXT"),
    ("finished_at", "TEXT"),
    ("reflection_protocol_text", "TEXT"),
    ("reflection_protocol_hash", "TEXT"),
    ("belief_protocol_text", "TEXT"),
    ("belief_protocol_hash", "TEXT"),
)


@dataclass(frozen=True)
class Table:
    """A table of the layout: its key column (created with the table) and its other columns."""

    name: str
    key: tuple[str, str]
    key_clause: str
    columns: tuple[tuple[str, str], ...]

    def create_sql(self) -> str:
        """``CREATE TABLE`` with the full current column set."""
        cols = [f"{self.key[0]} {self.key[1]} {self.key_clause}".rstrip()]
        cols += [f"{name} {sql_type}" for name, sql_type in self.columns]
        return f"CREATE TABLE {self.name} ({', '.join(cols)})"


def sample_column(index: int, field: str) -> str:
    """The wide column name ``s{index}_{field}``."""
    return f"s{index}_{field}"


def sample_columns(index: int) -> tuple[str, ...]:
    """The 24 column names of sample ``index`` in layout order."""
    return tuple(sample_column(index, field) for field in SAMPLE_FIELDS)


def tables(sampling_n: int) -> tuple[Table, ...]:
    """Every table of the layout for ``sampling_n`` samples, in creation order (FK targets first)."""
    if sampling_n < 1:
        raise StoreError(f"sampling_n must be >= 1, got {sampling_n}")
    if 2 + 24 * sampling_n > SQLITE_MAX_COLUMNS:
        raise StoreError(
            f"sampling_n={sampling_n} needs {2 + 24 * sampling_n} run_results columns, above SQLite's "
            f"limit of {SQLITE_MAX_COLUMNS}; use at most {(SQLITE_MAX_COLUMNS - 2) // 24} samples"
        )
    results = [("user_prompt", "TEXT")]
    for i in range(sampling_n):
        results += [(sample_column(i, f), t) for f, t in SAMPLE_COLUMN_TYPES.items()]
    return (
        Table("schema_version", ("version", "INTEGER"), "PRIMARY KEY", (("applied_at", "TEXT"),)),
        Table(
            "questions",
            ("id", "TEXT"),
            "PRIMARY KEY",
            tuple(
                (c, "TEXT")
                for c in (
                    "choice_type",
                    "question_type",
                    "event",
                    "options",
                    "answer",
                    "end_time",
                    "imported_at",
                )
            ),
        ),
        Table(
            "prompt_templates", ("key", "TEXT"), "PRIMARY KEY", (("value", "TEXT"), ("imported_at", "TEXT"))
        ),
        Table("run_meta", RUN_META_COLUMNS[0], "PRIMARY KEY", RUN_META_COLUMNS[1:]),
        Table("run_results", ("question_id", "TEXT"), "PRIMARY KEY REFERENCES questions(id)", tuple(results)),
    )


#: Our addition to the layout: which cassette entries each stored sample used (sorted entry keys,
#: search and detector included). Readers of the existing layout ignore it; older DBs lack it.
SAMPLE_ENTRIES_TABLE = "oracleproto_sample_entries"
SAMPLE_ENTRIES_SQL = (
    f"CREATE TABLE IF NOT EXISTS {SAMPLE_ENTRIES_TABLE} (question_id TEXT NOT NULL REFERENCES "
    "questions(id), sample INTEGER NOT NULL, entry_keys TEXT NOT NULL, PRIMARY KEY (question_id, sample))"
)


@dataclass(frozen=True)
class Migration:
    """A numbered schema step; ``apply`` runs after the column-completion pass."""

    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


def _no_extra_step(conn: sqlite3.Connection) -> None:
    """Version 5 is reached by the column-completion pass alone."""


#: Numbered migrations, recorded in ``schema_version`` when applied. Append new versions here.
MIGRATIONS: tuple[Migration, ...] = (
    Migration(5, "run-layout v5: create missing tables and add every missing column", _no_extra_step),
)
assert MIGRATIONS[-1].version == SCHEMA_VERSION


#: SQLite's page cache per connection (negative: KiB). The default 2 MiB per model DB made a run's
#: memory grow with its number of models; a sample's write touches a few pages and the analysis
#: scans tables in order, so 256 KiB costs no measurable time (docs/design/performance.md,
#: "SQLite page cache per model DB").
PAGE_CACHE_SIZE = -256


def apply_pragmas(conn: sqlite3.Connection) -> None:
    """WAL, foreign keys on, synchronous NORMAL, busy timeout 5 s (run-layout.md), a small page cache."""
    conn.execute("PRAGMA busy_timeout = 5000")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"PRAGMA cache_size = {PAGE_CACHE_SIZE}")


def table_columns(conn: sqlite3.Connection, table: str) -> dict[str, str]:
    """Existing columns of ``table`` (name → declared type, upper case); empty if it is absent."""
    rows = conn.execute(f"PRAGMA table_info({table})").fetchall()
    return {str(row[1]): str(row[2]).upper() for row in rows}


def _fix_hint(where: Path | str) -> str:
    return (
        f"{where} was not written in the run layout (run-layout.md, schema version {SCHEMA_VERSION}); "
        "move the file aside or use a new run id"
    )


def check_schema(conn: sqlite3.Connection, sampling_n: int, where: Path | str) -> list[tuple[str, str, str]]:
    """Validate existing tables; return the ``(table, column, type)`` triples still missing."""
    missing: list[tuple[str, str, str]] = []
    for table in tables(sampling_n):
        existing = table_columns(conn, table.name)
        if not existing:
            continue
        if table.key[0] not in existing:
            raise StoreError(
                f"{where}: table {table.name!r} has no key column {table.key[0]!r}, which cannot be "
                f"added in place; {_fix_hint(where)}"
            )
        for name, sql_type in (table.key, *table.columns):
            found = existing.get(name)
            if found is None:
                missing.append((table.name, name, sql_type))
            elif found not in ("", sql_type):
                raise StoreError(
                    f"{where}: column {table.name}.{name} is declared {found}, expected {sql_type}; "
                    f"{_fix_hint(where)}"
                )
    return missing


def stored_version(conn: sqlite3.Connection) -> int:
    """Highest version recorded in ``schema_version`` (0 when none)."""
    if not table_columns(conn, "schema_version"):
        return 0
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def init_schema(conn: sqlite3.Connection, sampling_n: int, applied_at: str, where: Path | str) -> None:
    """Bring a new or older DB to the full version-5 column set in one pass, in one transaction.

    ``applied_at`` comes from the caller (the run's start time), never the wall clock, so a
    replayed run writes identical ``schema_version`` rows.
    """
    version = stored_version(conn)
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{where}: schema version {version} is newer than this oracleproto understands "
            f"({SCHEMA_VERSION}); upgrade oracleproto to read this run"
        )
    missing = check_schema(conn, sampling_n, where)
    conn.execute("BEGIN IMMEDIATE")
    try:
        for table in tables(sampling_n):
            if not table_columns(conn, table.name):
                conn.execute(table.create_sql())
        for table_name, column, sql_type in missing:
            conn.execute(f"ALTER TABLE {table_name} ADD COLUMN {column} {sql_type}")
        conn.execute(SAMPLE_ENTRIES_SQL)
        for migration in MIGRATIONS:
            if migration.version > version:
                migration.apply(conn)
                conn.execute(
                    "INSERT OR IGNORE INTO schema_version(version, applied_at) VALUES (?, ?)",
                    (migration.version, applied_at),
                )
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
