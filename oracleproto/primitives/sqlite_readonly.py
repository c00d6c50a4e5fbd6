"""Open a SQLite file read-only, by a URI that survives any path (``?``, ``#``, ``%``, spaces)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def readonly_uri(path: Path) -> str:
    """The ``file:`` URI opening ``path`` read-only (never creates it, never writes a journal)."""
    # Path.as_uri percent-encodes; a hand-built "file:{path}" breaks on a folder named "a#b" or "x?y".
    return f"{path.resolve().as_uri()}?mode=ro"


def connect_readonly(path: Path) -> sqlite3.Connection:
    """``sqlite3.connect`` on ``path`` read-only."""
    return sqlite3.connect(readonly_uri(path), uri=True)
