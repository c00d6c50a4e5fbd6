"""``json_string`` and ``canonical_json_long_text`` (issue 18) write exactly json's text."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.primitives.hashing import LONG_STRING, canonical_json, canonical_json_long_text, json_string

# Every class of character json treats differently: plain ASCII, the escaped quote and backslash,
# the named control escapes, other controls (\u00XX), DEL, non-ASCII, astral, a lone surrogate.
_CHARS = list('ab {}":,\\/\n\r\t\b\f\x00\x1f\x7f\x80é中\U0001f600\u2028\ud800')
_SHORT = st.text(alphabet=st.sampled_from(_CHARS), max_size=30)
_PAD = "the forecast of resolved events " * (LONG_STRING // 32 + 1)
#: Long strings: mostly ASCII words (the fast path) with any of the characters above around them.
_LONG = st.builds(lambda a, b, c: a + _PAD + b + _PAD[: len(c) * 7] + c, _SHORT, _SHORT, _SHORT)
_STRINGS = _SHORT | _LONG | st.builds(lambda a: "x" * (LONG_STRING - 1) + a, _SHORT)
_SETTINGS = settings(max_examples=400, deadline=None, derandomize=True, database=None)


def _reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


@_SETTINGS
@given(_STRINGS)
def test_json_string_is_jsons_text(value: str) -> None:
    assert json_string(value) == _reference(value)


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=True, allow_infinity=True)
    | _STRINGS
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_SHORT | _LONG, inner, max_size=4),
    max_leaves=12,
)


@_SETTINGS
@given(_VALUES)
def test_canonical_json_is_json_dumps_text(value: Any) -> None:
    # canonical_json builds json's C encoder itself (no JSONEncoder): the text must stay json.dumps's.
    reference = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == reference


def test_canonical_json_default_hook_is_json_dumps_default() -> None:
    value = {"b": b"\x00raw", "a": [b"", 1.5]}

    def tag(raw: Any) -> Any:
        return {"bytes": raw.hex()}

    reference = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=tag)
    assert canonical_json(value, tag) == reference == '{"a":[{"bytes":""},1.5],"b":{"bytes":"00726177"}}'


@_SETTINGS
@given(_VALUES)
def test_canonical_json_long_text_is_canonical_json(value: Any) -> None:
    assert canonical_json_long_text(value) == canonical_json(value)


def test_canonical_json_long_text_fails_like_canonical_json() -> None:
    for bad in ({"a": object()}, {1: "a", "b": 2}):
        for encode in (canonical_json, canonical_json_long_text):
            try:
                encode(bad)
            except TypeError as exc:
                assert "not JSON serializable" in str(exc) or "not supported" in str(exc)
            else:  # pragma: no cover - both must refuse
                raise AssertionError(f"{encode.__name__} accepted {bad!r}")
    cycle: list[Any] = []
    cycle.append(cycle)
    for encode in (canonical_json, canonical_json_long_text):
        try:
            encode(cycle)
        except ValueError as exc:
            assert "Circular reference" in str(exc)
    assert canonical_json_long_text({"x": math.inf, "y": -0.0}) == canonical_json({"x": math.inf, "y": -0.0})


def test_the_replace_path_covers_every_named_escape() -> None:
    # Long, ASCII, escapes only of the replace path (and each of them), then each other control.
    value = _PAD + 'a "quoted" \\ back\\slash\nline\r\ttab/'
    assert json_string(value) == _reference(value)
    for other in ("\b", "\f", "\x00", "\x1f", "\x7f", "é"):
        assert json_string(value + other) == _reference(value + other)
