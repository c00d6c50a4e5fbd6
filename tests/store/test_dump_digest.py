"""``logical_digest`` is the sha256 of ``logical_dump`` without holding the text (replay compares by it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from oracleproto.primitives.hashing import sha256_hex
from oracleproto.store import logical_digest, logical_dump
from oracleproto.verify.demo import find_demo_run


def test_digest_is_the_dump_hash_on_the_demo_databases() -> None:
    paths = sorted((find_demo_run() / "db").glob("*.db"))
    assert paths
    for path in paths:
        assert logical_digest(path) == sha256_hex(logical_dump(path))


def test_digest_of_tables_without_rows_and_of_no_table(tmp_path: Path) -> None:
    empty, bare = tmp_path / "empty.db", tmp_path / "bare.db"
    with sqlite3.connect(empty) as conn:
        conn.execute("CREATE TABLE t (a INTEGER, b BLOB)")
        conn.execute("CREATE TABLE u (x TEXT)")
        conn.execute("INSERT INTO u VALUES ('é'), ('a\nb')")
    with sqlite3.connect(bare) as conn:
        conn.execute("PRAGMA user_version = 1")  # a valid database file with no table
    for path in (empty, bare):
        assert logical_digest(path) == sha256_hex(logical_dump(path))
    assert logical_dump(bare) == "\n"
