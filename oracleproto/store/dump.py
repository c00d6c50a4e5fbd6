"""Logical dump of a per-model DB: what "byte-identical DB content" is compared on.

SQLite file bytes depend on page allocation, i.e. on write order; the rows do not. The dump
lists every table (sorted by name) with its columns and its rows sorted, one canonical JSON
line per row, so two runs that stored the same samples in any order dump identically.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from oracleproto.errors import StoreError
from oracleproto.primitives.hashing import canonical_json
from oracleproto.primitives.sqlite_readonly import connect_readonly
from oracleproto.primitives.sqlite_text import is_decode_error, tolerant_text


def _cell(value: object) -> object:
    if isinstance(value, bytes):
        return {"blob_hex": value.hex()}
    return value


def _sorted_rows(conn: sqlite3.Connection, table: str) -> list[str]:
    """The table's rows as canonical JSON lines, sorted.

    A TEXT cell that is not UTF-8 (a damaged file) dumps as ``{"invalid_utf8_hex": …}``: the DB
    then differs from any DB holding text, instead of the dump failing as if it were no database.
    """
    sql = f'SELECT * FROM "{table}"'
    try:
        return sorted(canonical_json([_cell(v) for v in row]) for row in conn.execute(sql))
    except sqlite3.OperationalError as exc:
        if not is_decode_error(exc):
            raise
    conn.text_factory = tolerant_text
    try:
        return sorted(canonical_json([_cell(v) for v in row]) for row in conn.execute(sql))
    finally:
        conn.text_factory = str


def _logical_lines(db_path: Path) -> Iterator[str]:
    """The dump's lines, one table's sorted rows held at a time."""
    if not db_path.is_file():
        raise StoreError(f"{db_path}: database not found; nothing to dump")
    try:
        conn = connect_readonly(db_path)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"{db_path}: cannot open for dumping ({exc})") from exc
    try:
        names = [
            str(row[0])
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name"
            )
        ]
        for name in names:
            info = conn.execute(f'PRAGMA table_info("{name}")').fetchall()
            columns = [[str(c[1]), str(c[2]).upper(), int(c[5])] for c in info]
            rows = _sorted_rows(conn, name)
            yield f"table {name}"
            yield f"columns {canonical_json(columns)}"
            for row in rows:
                yield f"row {row}"
    except sqlite3.DatabaseError as exc:
        raise StoreError(
            f"{db_path}: cannot dump ({exc}); the file is not a readable SQLite database"
        ) from exc
    finally:
        conn.close()


def logical_dump(db_path: Path) -> str:
    """Canonical text of every table's columns and rows (sorted); independent of write order."""
    return "".join(f"{line}\n" for line in _logical_lines(db_path)) or "\n"


def logical_digest(db_path: Path) -> str:
    """sha256 hex of :func:`logical_dump`, without holding the whole text (one table's rows at a time)."""
    digest = hashlib.sha256()
    empty = True
    for line in _logical_lines(db_path):
        digest.update(line.encode("utf-8"))
        digest.update(b"\n")
        empty = False
    if empty:
        digest.update(b"\n")  # the dump of a database without tables is one line break
    return digest.hexdigest()
