"""Per-model schema: exact columns, pragmas, one-pass migrations, wrong schemas rejected."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from oracleproto.agent.result import SAMPLE_FIELDS
from oracleproto.errors import StoreError
from oracleproto.store import ModelStore, RunMeta
from oracleproto.store.schema import SCHEMA_VERSION, init_schema, tables

TABLES = ("schema_version", "questions", "prompt_templates", "run_meta", "run_results")
STAMP = "2026-03-01T12:00:00.123456+00:00"


def layout(path: Path) -> dict[str, list[str]]:
    """Table → ['name TYPE pk', …] as PRAGMA table_info reports it."""
    conn = sqlite3.connect(path)
    try:
        return {
            table: [
                f"{r[1]} {r[2]}{' pk' if r[5] else ''}" for r in conn.execute(f"PRAGMA table_info({table})")
            ]
            for table in TABLES
        }
    finally:
        conn.close()


def test_fresh_schema_matches_run_layout(
    tmp_path: Path, store_factory: Callable[..., ModelStore], snapshot: SnapshotAssertion
) -> None:
    path = tmp_path / "m.db"
    store_factory(path).close()
    got = layout(path)
    assert got == snapshot
    results = got["run_results"]
    assert results[:2] == ["question_id TEXT pk", "user_prompt TEXT"]
    assert len(results) == 2 + 24 * 2
    assert [c.split()[0] for c in results[2:26]] == [f"s0_{f}" for f in SAMPLE_FIELDS]
    assert [c.split()[0] for c in results[26:]] == [f"s1_{f}" for f in SAMPLE_FIELDS]
    assert got["run_meta"][0] == "run_id TEXT pk"


def test_pragmas_and_foreign_key(tmp_path: Path, store_factory: Callable[..., ModelStore]) -> None:
    path = tmp_path / "m.db"
    store = store_factory(path)
    conn = store._conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
    fks = conn.execute("PRAGMA foreign_key_list(run_results)").fetchall()
    assert [(fk[2], fk[3], fk[4]) for fk in fks] == [("questions", "question_id", "id")]
    store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version, applied_at FROM schema_version").fetchall() == [(5, STAMP)]
    conn.close()


def partial_db(path: Path) -> None:
    """An older DB: a few columns per table, one stored sample, no schema_version table."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE questions (id TEXT PRIMARY KEY, event TEXT, answer TEXT);
        CREATE TABLE run_meta (run_id TEXT, model TEXT, sampling_n INTEGER, started_at TEXT);
        CREATE TABLE run_results (question_id TEXT PRIMARY KEY, s0_final_answer_letters TEXT,
            s0_correct INTEGER, s0_parse_ok INTEGER, s0_error TEXT, s0_created_at TEXT);
        INSERT INTO questions VALUES ('q-yes', 'old event', 'A');
        INSERT INTO run_results VALUES ('q-yes', '["A"]', 1, 1, NULL, '2026-01-01T00:00:00.000000+00:00');
        """
    )
    conn.commit()
    conn.close()


def test_migration_from_partial_schema_reaches_full_set(tmp_path: Path) -> None:
    old, fresh = tmp_path / "old.db", tmp_path / "fresh.db"
    partial_db(old)
    for path in (old, fresh):
        conn = sqlite3.connect(path, isolation_level=None)
        init_schema(conn, 2, STAMP, path)
        conn.close()
    old_layout, fresh_layout = layout(old), layout(fresh)
    for table in TABLES:
        # Added columns land at the end, so compare as sets; the fresh DB fixes the order. The old
        # run_meta had no primary key and keeps it that way (run_meta holds one row anyway).
        assert sorted(c.removesuffix(" pk") for c in old_layout[table]) == sorted(
            c.removesuffix(" pk") for c in fresh_layout[table]
        ), table
    conn = sqlite3.connect(old)
    assert conn.execute(
        "SELECT s0_final_answer_letters, s0_nudges_used, s1_created_at FROM run_results"
    ).fetchall() == [('["A"]', None, None)]
    assert conn.execute("SELECT version, applied_at FROM schema_version").fetchall() == [(5, STAMP)]
    conn.close()


def test_migration_is_idempotent(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    partial_db(path)
    conn = sqlite3.connect(path, isolation_level=None)
    init_schema(conn, 2, STAMP, path)
    before = layout(path)
    init_schema(conn, 2, "2027-01-01T00:00:00.000000+00:00", path)
    assert conn.execute("SELECT version, applied_at FROM schema_version").fetchall() == [(5, STAMP)]
    conn.close()
    assert layout(path) == before


def test_migration_records_on_top_of_older_versions(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT)")
    conn.execute("INSERT INTO schema_version VALUES (4, '2025-01-01T00:00:00.000000+00:00')")
    init_schema(conn, 1, STAMP, path)
    assert conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall() == [(4,), (5,)]
    conn.close()


def test_open_store_on_partial_db_migrates_and_seeds(
    tmp_path: Path, store_factory: Callable[..., ModelStore], meta: RunMeta
) -> None:
    path = tmp_path / "old.db"
    partial_db(path)
    with pytest.raises(StoreError, match=r"run_meta\.run_id is None in the database"):
        # The old run_meta row is empty, so resuming into it must not silently adopt it.
        conn = sqlite3.connect(path)
        conn.execute("INSERT INTO run_meta (run_id) VALUES (NULL)")
        conn.commit()
        conn.close()
        store_factory(path)
    conn = sqlite3.connect(path)
    conn.execute("DELETE FROM run_meta")
    conn.commit()
    conn.close()
    with store_factory(path) as store:
        old = store.read_sample("q-yes", 0)
        assert old is not None and old.final_answer_letters == ("A",) and old.nudges_used == 0
        assert store.read_meta().model == meta.model
        assert ("q-yes", 0) in store.done_slots()
    # The legacy row lacked sampling_n; a read-only reader infers it from the sample columns.
    conn = sqlite3.connect(path)
    conn.execute("UPDATE run_meta SET sampling_n = NULL")
    conn.commit()
    conn.close()
    with ModelStore.open_existing(path) as reader:
        assert reader.sampling_n == 2 and reader.read_meta().sampling_n == 2
        assert reader.done_slots() == {("q-yes", 0)}


def make_db(path: Path, sql: str) -> None:
    conn = sqlite3.connect(path)
    conn.executescript(sql)
    conn.commit()
    conn.close()


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        (
            "CREATE TABLE run_results (question_id TEXT PRIMARY KEY, s0_correct TEXT);",
            r"column run_results.s0_correct is declared TEXT, expected INTEGER",
        ),
        (
            "CREATE TABLE run_results (qid TEXT PRIMARY KEY, user_prompt TEXT);",
            r"table 'run_results' has no key column 'question_id', which cannot be added in place",
        ),
        (
            "CREATE TABLE questions (id INTEGER PRIMARY KEY);",
            r"column questions.id is declared INTEGER, expected TEXT",
        ),
    ],
)
def test_wrong_schema_is_explained(
    tmp_path: Path, store_factory: Callable[..., ModelStore], sql: str, message: str
) -> None:
    path = tmp_path / "wrong.db"
    make_db(path, sql)
    with pytest.raises(
        StoreError, match=rf"wrong.db: {message}.*run-layout.md, schema version 5\); move the file aside"
    ):
        store_factory(path)


def test_newer_schema_version_is_refused(tmp_path: Path, store_factory: Callable[..., ModelStore]) -> None:
    path = tmp_path / "new.db"
    make_db(
        path,
        "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TEXT);"
        "INSERT INTO schema_version VALUES (6, NULL);",
    )
    with pytest.raises(StoreError, match="schema version 6 is newer than this oracleproto understands"):
        store_factory(path)


def test_not_a_database_is_explained(tmp_path: Path, store_factory: Callable[..., ModelStore]) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match=r"junk.db: not a usable SQLite database .*move the file aside"):
        store_factory(path)
    with pytest.raises(StoreError, match=r"junk.db: not a valid SQLite database .*the run is damaged"):
        ModelStore.open_existing(path)


def test_too_many_samples_for_wide_table() -> None:
    assert len(tables(83)[-1].columns) == 1 + 24 * 83
    with pytest.raises(
        StoreError, match=r"sampling_n=84 needs 2018 run_results columns.*use at most 83 samples"
    ):
        tables(84)
    with pytest.raises(StoreError, match="sampling_n must be >= 1"):
        tables(0)


def test_schema_version_constant() -> None:
    assert SCHEMA_VERSION == 5
