"""TEXT cells that are not UTF-8: find them, name them, and read around them.

SQLite stores whatever bytes it is given as TEXT, and Python's ``sqlite3`` refuses the whole row
(``OperationalError: Could not decode to UTF-8 column …``) when one cell is not UTF-8. A run DB
damaged that way must not block every command whole, nor be reported as "not a SQLite
database": readers catch the error with :func:`is_decode_error`, locate the cell with
:func:`undecodable_cells` and say which one it is with :func:`damaged_cell_message`. Readers that
must go on (a logical dump) decode with :func:`tolerant_text`, which keeps the bytes visible.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

#: The start of the message ``sqlite3`` raises for a TEXT cell that is not UTF-8.
_DECODE_ERROR = "Could not decode to UTF-8"


def is_decode_error(exc: BaseException) -> bool:
    """True when ``exc`` is ``sqlite3``'s refusal of a TEXT cell that is not UTF-8."""
    return isinstance(exc, sqlite3.OperationalError) and str(exc).startswith(_DECODE_ERROR)


def undecodable_cells(
    con: sqlite3.Connection, sql: str, params: Sequence[Any] = ()
) -> list[tuple[tuple[Any, ...], str, int]]:
    """``(row, column, byte offset)`` of every TEXT cell of ``sql``'s result that is not UTF-8.

    ``row`` is the row's cells as read (bytes for TEXT), for the caller to name it by its key.
    The query runs on a cursor of its own with bytes for TEXT, so ``con`` is left as it was.
    """
    previous = con.text_factory
    con.text_factory = bytes
    try:
        cursor = con.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description or ()]
        found: list[tuple[tuple[Any, ...], str, int]] = []
        for row in cursor:
            for name, value in zip(names, row, strict=True):
                if isinstance(value, bytes):
                    try:
                        value.decode("utf-8")
                    except UnicodeDecodeError as exc:
                        found.append((tuple(row), name, exc.start))
        return found
    finally:
        con.text_factory = previous


def text_of(value: Any) -> str:
    """A cell read as bytes, as text for a message (undecodable bytes shown as U+FFFD)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def damaged_cell_message(where: str, column: str, offset: int) -> str:
    """What to tell the user about one TEXT cell that is not UTF-8."""
    return (
        f"{where}, column {column}: not UTF-8 text (byte {offset}); the database is damaged: restore "
        "this file from a backup or the published bundle (`oracleproto bundle import`)"
    )


def tolerant_text(data: bytes) -> str | dict[str, str]:
    """A TEXT cell as ``str``, or ``{"invalid_utf8_hex": …}`` when it is not UTF-8.

    For readers that must account for every byte (a logical dump compares DBs): the damaged
    cell differs visibly from any text instead of stopping the reader or passing for text.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return {"invalid_utf8_hex": data.hex()}
