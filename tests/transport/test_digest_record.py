"""``digest_and_record`` and ``digest_and_line`` (issue 18: bodies encoded once, the journal record
built from parts encoded once, the long-string fast path) give the reference texts."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.primitives.hashing import LONG_STRING
from oracleproto.transport.entry import (
    Entry,
    _bytes_tag,
    _undigested_interaction,
    digest_and_line,
    digest_and_record,
    from_interaction,
    from_json_safe,
    interaction_digest,
)

_SHORT = st.text(
    alphabet=st.sampled_from(list('ab {}"\\:\n\r\t\x00\x1f\x7f\x80é中\U0001f600\u2028')), max_size=20
)
_PAD = "forecast of resolved events " * (LONG_STRING // 28 + 1)
#: Bodies around the fast path's threshold and far above it, with any character around them.
_BODY = (
    _SHORT | st.builds(lambda a, b: a + _PAD + b, _SHORT, _SHORT) | st.builds(lambda a: a + _PAD * 8, _SHORT)
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


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(_BODY, _BODY.map(str.encode) | st.binary(max_size=12) | _BODY.map(lambda t: t.encode() + b"\xff"))
def test_record_is_the_reference_line_and_reads_back(request_body: str, body: bytes) -> None:
    entry = _entry(request_body, body)
    interaction = _undigested_interaction(entry)
    digest = interaction_digest({**interaction, "oracleproto": dict(interaction["oracleproto"])})
    interaction["oracleproto"]["digest"] = digest
    line = json.dumps(
        interaction, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_bytes_tag
    )
    record = (line + "\n").encode("utf-8", "surrogatepass")
    assert digest_and_record(entry) == (digest, record)
    assert digest_and_line(entry) == (digest, line)
    # A digest already on the entry is reused; the record reads back as the same entry.
    carried = dataclasses.replace(entry, digest="d" * 64)
    assert digest_and_record(carried)[0] == digest_and_line(carried)[0] == "d" * 64
    loaded = from_interaction(from_json_safe(json.loads(record)), "test")
    assert (loaded.request_body, loaded.body, loaded.digest) == (request_body, body, digest)
