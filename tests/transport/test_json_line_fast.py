"""``to_json_line`` (digest reused, bytes tagged by the encoder) writes the text the tree-copy form wrote."""

from __future__ import annotations

import dataclasses
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.primitives.hashing import canonical_json
from oracleproto.transport.entry import (
    Entry,
    _json_safe,
    entry_digest,
    from_interaction,
    from_json_safe,
    to_interaction,
    to_json_line,
)

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.binary(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=10,
)


def _entry(body: bytes, attempts: list[dict[str, Any]], context: dict[str, Any] | None) -> Entry:
    return Entry(
        key="k" * 64,
        channel="llm",
        request_meta={"v": 1, "model": "m"},
        request_body='{"model":"m"}',
        context=context,
        occurrence=0 if context is not None else None,
        method="POST",
        uri="http://127.0.0.1/v1/chat/completions",
        request_headers={"content-type": ["application/json"]},
        status=200,
        reason="OK",
        response_headers={"content-type": ["application/json"], "x-id": ["a", "b"]},
        body=body,
        exception=None,
        latency_ms=12,
        recorded_at="2026-01-01T00:00:00.000000+00:00",
        attempts=attempts,
    )


def _old_line(entry: Entry) -> str:
    return canonical_json(_json_safe(to_interaction(entry)))


@settings(max_examples=100, deadline=None)
@given(
    st.binary(max_size=32) | st.text(max_size=16).map(str.encode),
    st.lists(st.dictionaries(st.text(max_size=4), _JSON, max_size=3), max_size=2),
    st.none()
    | st.fixed_dictionaries(
        {
            "model": st.text(max_size=4),
            "question_id": st.text(max_size=4),
            "sample": st.integers(0, 3),
            "step": st.integers(0, 3),
        }
    ),
)
def test_same_text_as_the_tree_copy(body: bytes, attempts: list[dict[str, Any]], ctx: Any) -> None:
    entry = _entry(body, attempts, ctx)
    assert to_json_line(entry) == _old_line(entry)
    # With the digest kept from a load (what the index build sees), the same text again.
    loaded = from_interaction(from_json_safe(_json_loads(to_json_line(entry))), "test")
    assert loaded.digest == entry_digest(entry)
    assert to_json_line(loaded) == _old_line(entry)


def test_a_stale_kept_digest_is_caught_by_the_reader() -> None:
    """The kept digest is trusted when writing; a wrong one fails the digest check on reading."""
    entry = dataclasses.replace(_entry(b"{}", [], None), digest="0" * 64)
    line = to_json_line(entry)
    try:
        from_interaction(from_json_safe(_json_loads(line)), "test")
    except Exception as exc:  # CassetteIntegrityError
        assert "does not match its digest" in str(exc)
    else:
        raise AssertionError("a stale digest was accepted")


def _json_loads(text: str) -> Any:
    import json

    return json.loads(text)
