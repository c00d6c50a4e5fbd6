"""``safe_text``: JSON any line splitter reads as one line and UTF-8 can encode, same value back."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.analysis.export import render_export
from oracleproto.primitives import safe_text

#: Every character class that broke a writer or a reader, plus ordinary non-ASCII.
_HOSTILE = '\x00\x1c\x85\u2028\u2029\ud800\udfff\u202e\u2066\u2069\u200b\ufeffé中\U0001f600\\"\n'
_TEXT = st.text(alphabet=st.sampled_from(list(_HOSTILE + "ab ")), max_size=40)


@settings(max_examples=120, deadline=None, derandomize=True, database=None)
@given(st.dictionaries(_TEXT, _TEXT | st.lists(_TEXT, max_size=3), max_size=4))
def test_dumps_is_one_utf8_line_holding_the_same_value(value: dict[str, object]) -> None:
    text = safe_text.dumps(value, sort_keys=True)
    text.encode("utf-8")  # a lone surrogate would raise here
    assert len(text.splitlines()) <= 1
    # The value json.dumps's own (ASCII) text denotes: equal to ``value``, except that an adjacent
    # high and low surrogate read back as the one character their escapes spell, in any JSON.
    assert json.loads(text) == json.loads(json.dumps(value))


@pytest.mark.parametrize("value", ["plain", "é 中 \U0001f600 \u202e \u200b \ufeff", {"a": ["\t", "\x7f"]}])
def test_text_without_unsafe_characters_keeps_its_bytes(value: object) -> None:
    assert safe_text.dumps(value) == json.dumps(value, ensure_ascii=False)


def test_only_surrogates_and_line_breaks_are_escaped() -> None:
    assert safe_text.dumps("a\u2028b\x85c\ud800") == '"a\\u2028b\\u0085c\\ud800"'
    assert safe_text.escape_surrogates('"\u2028\udfff"') == '"\u2028\\udfff"'
    assert safe_text.storable("x\ud800y\u2028") == "x\ufffdy\u2028"
    assert safe_text.has_surrogate("\udfff") and not safe_text.has_surrogate("\U0001f600")


def test_export_jsonl_keeps_one_sample_a_line() -> None:
    rows = [{"model": "m", "error": "x\u2028y\x85z\ud800"}, {"model": "n", "error": None}]
    text = render_export(rows, "jsonl")
    assert len(text.splitlines()) == 2
    text.encode("utf-8")
    assert [json.loads(line)["model"] for line in text.splitlines()] == ["m", "n"]
