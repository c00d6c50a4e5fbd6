"""Read a per-model DB's ``run_meta.config_snapshot`` without changing a byte of the run directory.

The resume check runs before the run is entered, and a refused resume must leave the run as it
was. Opening a WAL database, even read-only, may create or update its ``-wal``/``-shm`` files, so:
a DB closed cleanly (no ``-wal`` beside it) is opened ``immutable``; a DB whose ``-wal`` is still
there (its writer was killed) is copied with the ``-wal`` into a temporary folder and read there,
so the snapshot a killed first session left in the WAL is seen too.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

from oracleproto.errors import StoreError
from oracleproto.primitives.json_input import load_json


def _read(path: Path, uri: str) -> dict[str, Any] | None:
    try:
        with closing(sqlite3.connect(uri, uri=True)) as conn:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "run_meta" not in tables:
                return None
            columns = {row[1] for row in conn.execute("PRAGMA table_info(run_meta)")}
            if "config_snapshot" not in columns:
                return None
            row = conn.execute("SELECT config_snapshot FROM run_meta LIMIT 1").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreError(
            f"{path}: not a usable SQLite database ({exc}); move the file aside or use a new run id"
        ) from exc
    if row is None or row[0] is None:
        return None
    try:
        value = load_json(row[0])
    except (TypeError, json.JSONDecodeError) as exc:
        raise StoreError(f"{path}: run_meta.config_snapshot is not valid JSON") from exc
    if not isinstance(value, dict):
        raise StoreError(f"{path}: run_meta.config_snapshot is not a JSON object")
    return value


def peek_config_snapshot(path: Path) -> dict[str, Any] | None:
    """The stored config snapshot of ``path``; None when the DB, its run_meta row or snapshot is absent."""
    if not path.is_file():
        return None
    wal = path.with_name(path.name + "-wal")
    if not wal.exists():
        return _read(path, f"{path.resolve().as_uri()}?mode=ro&immutable=1")
    with tempfile.TemporaryDirectory(prefix="oracleproto-peek-") as tmp:
        copy = Path(tmp) / path.name
        shutil.copyfile(path, copy)
        shutil.copyfile(wal, Path(tmp) / wal.name)
        return _read(path, f"{copy.resolve().as_uri()}?mode=rw")
