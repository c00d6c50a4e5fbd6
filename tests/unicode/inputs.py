"""The table of issue 28 §1: untrusted fields × hostile inputs × commands, and how a value reads back.

Each hostile input carries an ASCII tag (``nul[``, ``lone[``…) so that a field holding it can be
found in any output; :func:`forms` lists the spellings a value may legitimately take on the way
(invalid UTF-8 decoded as U+FFFD, a lone surrogate in a plain-text SQLite cell as U+FFFD).
"""

from __future__ import annotations

from oracleproto.sim.hostile import INVALID_UTF8

#: Hostile input → the text the simulator or the dataset carries (``INVALID_UTF8`` goes out as bytes).
INPUTS: dict[str, str] = {
    "NUL": "nul[\x00]",
    "lone surrogate": "lone[\ud800|\udfff]",
    "U+2028/2029/0085": "sep[\u2028|\u2029|\x85]",
    "bidi controls": "bidi[\u202e|\u2066|\u2067|\u2068|\u2069]",
    "zero-width": "zw[\u200b|\ufeff]",
    "invalid UTF-8": f"bad[{INVALID_UTF8}]",
}
#: The one huge value (a page body of this many characters, in ``raw_content`` only).
BIG = "5 MB string"
BIG_CHARS = 5_000_000
COLUMNS: tuple[str, ...] = (*INPUTS, BIG)

#: Fields a page (Tavily) writes.
SEARCH_FIELDS = ("title", "url", "content", "raw_content", "answer")
#: Fields a model writes (``query`` is the search the model asked for, in its tool-call arguments).
MODEL_FIELDS = ("query", "model content", "reasoning", "tool-call arguments", "detector reason")
#: Fields a dataset or the user writes.
DATASET_FIELDS = ("question text", "option labels", "display names")
FIELDS: tuple[str, ...] = (*SEARCH_FIELDS, *MODEL_FIELDS, *DATASET_FIELDS)

COMMANDS: tuple[str, ...] = (
    "record",
    "replay",
    "verify",
    "report",
    "export",
    "view",
    "audit sample",
    "audit label",
    "audit score",
    "bundle export",
    "bundle import",
)

#: Question id → the hostile inputs written into its text and into its first option labels.
QUESTION_TEXT = {
    "demo-08": "NUL",
    "demo-06": "U+2028/2029/0085",
    "demo-09": "bidi controls",
    "demo-02": "zero-width",
}
OPTION_LABELS = {
    "demo-08": ("lone surrogate",),
    "demo-06": ("zero-width",),
    "demo-09": ("NUL", "U+2028/2029/0085", "bidi controls"),
}


def not_applicable(field: str, column: str) -> str | None:
    """Why ``field`` cannot carry ``column`` (None when it can)."""
    if column == BIG:
        return None if field == "raw_content" else "the 5 MB string goes in raw_content only"
    if field in ("question text", "option labels") and column == "invalid UTF-8":
        return None  # a source DB cell holding bytes: checked on a copy of the dataset
    if field == "question text" and column == "lone surrogate":
        return "SQLite text cannot hold one (only as invalid UTF-8: see that column)"
    if field == "display names" and column == "invalid UTF-8":
        return None  # a --names file holding bytes
    return None


def forms(column: str) -> tuple[str, ...]:
    """How input ``column`` may read back: as sent, or decoded with U+FFFD where text had to be."""
    text = INPUTS[column]
    if column == "invalid UTF-8":
        return ("bad[\ufffd\ufffd]",)
    if column == "lone surrogate":
        return (text, "lone[\ufffd|\ufffd]")
    return (text,)


def holds(value: object, column: str) -> bool:
    """True when ``value`` (a string) holds input ``column`` in one of its :func:`forms`."""
    return isinstance(value, str) and any(form in value for form in forms(column))
