"""Cell conventions of the existing layout: ``SampleResult`` ↔ the 24 ``s{i}_…`` SQL values.

Pure functions (no I/O) so every convention is testable in isolation.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from oracleproto.agent.result import SAMPLE_FIELDS, SampleResult
from oracleproto.errors import StoreError
from oracleproto.primitives.hashing import canonical_json
from oracleproto.primitives.safe_text import escape_surrogates, has_surrogate, storable
from oracleproto.store.naming import format_timestamp, parse_timestamp

SqlValue = str | int | float | bytes | None

_JSON_FIELDS = ("messages_trace", "search_calls", "step_metrics", "belief_final", "belief_trace")
_INT_FIELDS = (
    "tool_calls_count",
    "react_steps",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "latency_ms",
    "nudges_used",
)
_TEXT_FIELDS = (
    "final_answer_raw",
    "error",
    "finish_reason",
    "response_id",
    "system_fingerprint",
    "service_tier",
)


#: Positions of the JSON cells in :func:`encode_sample`'s tuple.
JSON_CELLS = frozenset(
    i for i, name in enumerate(SAMPLE_FIELDS) if name in (*_JSON_FIELDS, "final_answer_letters")
)


def storable_cells(values: Sequence[SqlValue], json_at: Collection[int] = ()) -> tuple[SqlValue, ...]:
    """``values`` that SQLite can bind as UTF-8 text, for a row holding lone surrogates.

    A model or a page can send ``\\ud800`` (a JSON escape of a lone surrogate); UTF-8 cannot carry
    it, so binding raises. JSON cells (positions ``json_at``) get the character back as its
    ``\\uXXXX`` escape (the same JSON value); plain text cells get U+FFFD. Writers call this only
    after a bind failed, so rows without such characters cost nothing more.
    """
    out: list[SqlValue] = []
    for index, value in enumerate(values):
        if isinstance(value, str) and has_surrogate(value):
            out.append(escape_surrogates(value) if index in json_at else storable(value))
        else:
            out.append(value)
    return tuple(out)


def encode_options(options: Sequence[str]) -> str:
    """The ``questions.options`` cell: a JSON list, non-ASCII kept, lone surrogates escaped.

    An option label may carry a lone surrogate (a ``\\ud800`` escape in the dataset's JSON),
    which a UTF-8 cell cannot hold raw; ``verify`` rebuilds the cell with this same function.
    """
    return escape_surrogates(json.dumps(list(options), ensure_ascii=False))


def encode_letters(letters: Sequence[str] | None) -> str | None:
    """Parsed letters as a JSON list of sorted letters (``["A", "C"]``); NULL when unparsed.

    The separator style (``", "``) is the existing layout's, as in its example.
    """
    if letters is None:
        return None
    return json.dumps(sorted(letters), ensure_ascii=False)


def _bool(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _json(value: Any) -> str | None:
    return None if value is None else canonical_json(value)


def check_coherent(result: SampleResult) -> None:
    """Reject results that break the cell conventions (letters ⇔ parse_ok, correct ⇒ parsed)."""
    if result.parse_ok and result.final_answer_letters is None:
        raise StoreError("sample result has parse_ok=True but no parsed letters; set the letters")
    if not result.parse_ok and result.final_answer_letters is not None:
        raise StoreError("sample result has letters but parse_ok=False; unparsed answers store NULL letters")
    if not result.parse_ok and result.correct is not None:
        raise StoreError("sample result has correct set for an unparsed answer; correct must be None")
    if result.parse_ok and result.correct is None:
        raise StoreError("sample result is parsed but correct is None; score it before storing")
    for name in _INT_FIELDS:
        if getattr(result, name) < 0:
            raise StoreError(f"sample result field {name} is negative ({getattr(result, name)})")


def encode_sample(result: SampleResult) -> tuple[SqlValue, ...]:
    """The 24 SQL values of one sample, in :data:`SAMPLE_FIELDS` order."""
    check_coherent(result)
    values: dict[str, SqlValue] = {
        "final_answer_letters": encode_letters(result.final_answer_letters),
        "correct": _bool(result.correct),
        "parse_ok": int(result.parse_ok),
        "created_at": format_timestamp(result.created_at),
        "belief_parse_ok": _bool(result.belief_parse_ok),
        "final_answer_retry_used": int(result.final_answer_retry_used),
    }
    for name in _JSON_FIELDS:
        values[name] = _json(getattr(result, name))
    for name in (*_INT_FIELDS, *_TEXT_FIELDS):
        values[name] = getattr(result, name)
    return tuple(values[name] for name in SAMPLE_FIELDS)


def _load_json(text: Any, column: str, where: str) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except (TypeError, json.JSONDecodeError) as exc:
        raise StoreError(f"{where}: column {column} holds invalid JSON {str(text)[:60]!r}") from exc


def _to_bool(value: SqlValue, column: str, where: str) -> bool | None:
    if value is None:
        return None
    if value in (0, 1):
        return bool(value)
    raise StoreError(f"{where}: column {column} holds {value!r}, expected 0, 1 or NULL")


def _to_int(value: SqlValue, column: str, where: str) -> int:
    # Older DBs gained these columns by ALTER TABLE, so they read NULL: the layout's zero.
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    raise StoreError(f"{where}: column {column} holds {value!r}, expected an integer")


def decode_sample(row: Mapping[str, SqlValue], where: str) -> SampleResult | None:
    """Rebuild a ``SampleResult`` from field → value (missing fields read as NULL).

    Returns ``None`` for a slot never written (``created_at`` NULL). ``where`` names the DB,
    question and sample for error messages.
    """
    created = row.get("created_at")
    if created is None:
        return None
    letters_raw = _load_json(row.get("final_answer_letters"), "final_answer_letters", where)
    if letters_raw is not None and not (
        isinstance(letters_raw, list) and all(isinstance(x, str) for x in letters_raw)
    ):
        raise StoreError(f"{where}: final_answer_letters is not a JSON list of letters: {letters_raw!r}")
    parse_ok = _to_bool(row.get("parse_ok"), "parse_ok", where)
    retry = _to_bool(row.get("final_answer_retry_used"), "final_answer_retry_used", where)
    fields: dict[str, Any] = {
        "final_answer_letters": None if letters_raw is None else tuple(letters_raw),
        "correct": _to_bool(row.get("correct"), "correct", where),
        "parse_ok": bool(parse_ok),
        "created_at": parse_timestamp(str(created)),
        "belief_parse_ok": _to_bool(row.get("belief_parse_ok"), "belief_parse_ok", where),
        "final_answer_retry_used": bool(retry),
    }
    for name in _JSON_FIELDS:
        fields[name] = _load_json(row.get(name), name, where)
    for name in _INT_FIELDS:
        fields[name] = _to_int(row.get(name), name, where)
    for name in _TEXT_FIELDS:
        value = row.get(name)
        fields[name] = None if value is None else str(value)
    return SampleResult(**fields)
