"""``digest_and_line`` (issue 18: bodies encoded once, ASCII fast path) gives the reference texts."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.transport.entry import (
    Entry,
    _bytes_tag,
    _undigested_interaction,
    digest_and_line,
    interaction_digest,
)

_TEXT = st.text(
    alphabet=st.sampled_from(list('ab {}"\\:\n\t\x00\x1f\x7f\x80é中\U0001f600\u2028')), max_size=40
)


def _entry(request_body: str, body: bytes) -> Entry:
    return Entry(
        key="k" * 64,
        channel="llm",
        request_meta={"v": 1, "model": "m"},
        request_body=request_body,
        context={"model": "m", "question_id": "q", "sample": 0, "step": 0},
        occurrence=0,
        method="POST",
        uri="http://127.0.0.1/v1/chat/completions",
        request_headers={"content-type": ["application/json"]},
        status=200,
        reason="OK",
        response_headers={"content-type": ["application/json"]},
        body=body,
        exception=None,
        latency_ms=3,
        recorded_at="2026-01-01T00:00:00.000000+00:00",
        attempts=[{"attempt": 0, "status": 200}],
    )


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(_TEXT, _TEXT.map(str.encode) | st.binary(max_size=12))
def test_digest_and_line_match_the_whole_tree_encoding(request_body: str, body: bytes) -> None:
    entry = _entry(request_body, body)
    interaction = _undigested_interaction(entry)
    digest = interaction_digest({**interaction, "oracleproto": dict(interaction["oracleproto"])})
    interaction["oracleproto"]["digest"] = digest
    line = json.dumps(
        interaction, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_bytes_tag
    )
    assert digest_and_line(entry) == (digest, line)
    # A digest already on the entry (loaded, or put) is reused, not recomputed.
    assert digest_and_line(dataclasses.replace(entry, digest="d" * 64))[0] == "d" * 64
