"""Reading a stored config snapshot changes no byte of the run directory (WAL or not)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from oracleproto.errors import StoreError
from oracleproto.store import RunDir
from oracleproto.store.peek import peek_config_snapshot


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _db(path: Path, snapshot: object) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # keep the row in the -wal only
    conn.execute("CREATE TABLE run_meta (run_id TEXT, config_snapshot TEXT)")
    stored = None if snapshot is None else json.dumps(snapshot)
    conn.execute("INSERT INTO run_meta VALUES ('r', ?)", (stored,))
    return conn


def test_a_closed_database_is_read_without_a_trace(tmp_path: Path) -> None:
    _db(tmp_path / "m.db", {"run": {"delta_days": 1}}).close()
    before = _files(tmp_path)
    assert set(before) == {"m.db"}
    assert peek_config_snapshot(tmp_path / "m.db") == {"run": {"delta_days": 1}}
    assert _files(tmp_path) == before


def test_a_snapshot_still_in_the_wal_of_a_killed_writer_is_seen_and_nothing_changes(tmp_path: Path) -> None:
    writer = _db(tmp_path / "m.db", {"run": {"delta_days": 5}})  # never checkpointed, never closed
    try:
        before = _files(tmp_path)
        assert {"m.db-wal", "m.db-shm"} <= set(before)
        assert peek_config_snapshot(tmp_path / "m.db") == {"run": {"delta_days": 5}}
        assert _files(tmp_path) == before
    finally:
        writer.close()


def test_absent_database_table_or_snapshot_is_none(tmp_path: Path) -> None:
    assert peek_config_snapshot(tmp_path / "missing.db") is None
    conn = sqlite3.connect(tmp_path / "empty.db")
    conn.execute("CREATE TABLE other (x)")
    conn.close()
    assert peek_config_snapshot(tmp_path / "empty.db") is None
    _db(tmp_path / "null.db", None).close()
    assert peek_config_snapshot(tmp_path / "null.db") is None


def test_a_damaged_database_or_snapshot_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "junk.db").write_bytes(b"not a database at all, just some bytes" * 40)
    with pytest.raises(StoreError, match=r"junk.db: not a usable SQLite database"):
        peek_config_snapshot(tmp_path / "junk.db")
    _db(tmp_path / "list.db", [1, 2]).close()
    with pytest.raises(StoreError, match=r"list.db: run_meta.config_snapshot is not a JSON object"):
        peek_config_snapshot(tmp_path / "list.db")


def test_a_run_being_written_is_refused_by_a_probe_that_creates_nothing(tmp_path: Path) -> None:
    probe = RunDir.at(tmp_path, "20260301-120000-0a1f")
    probe.refuse_if_being_written()  # nothing there: no error, and no file created
    assert list(tmp_path.iterdir()) == []
    run = RunDir.create(tmp_path, "20260301-120000-0a1f")
    with run.writer_lock(), pytest.raises(StoreError, match=r"being written by another process \(pid \d+"):
        probe.refuse_if_being_written()
    probe.refuse_if_being_written()  # released
