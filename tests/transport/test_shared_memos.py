"""Replay's per-request memos change no value: shared-channel keys, response shapes, detector reads."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.context import CallContext, call_context
from oracleproto.transport.entry import Entry
from oracleproto.transport.keys import canonical_request, entry_key, projection_json
from oracleproto.transport.outcome import ResponseShapes, to_response
from oracleproto.transport.response_build import response_shape, shaped_response
from oracleproto.transport.shared_keys import SharedKeyMemo, shared_key
from tests.transport.helpers import CHAT_PATH, chat_body, make_rr, response_state

_URL = "http://127.0.0.1:8123/v1/chat/completions?key=sk-test-planted-fake-000&b=2"
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(body=_json, channel=st.sampled_from(["search", "detector"]))
def test_shared_key_is_the_schema_key(body: Any, channel: Any) -> None:
    raw = json.dumps(body).encode()
    memo = SharedKeyMemo()
    first = memo.get(channel, "POST", _URL, raw)
    again = memo.get(channel, "POST", _URL, raw)
    projection = canonical_request(channel, "POST", _URL, raw)
    assert first is again and (memo.hits, memo.misses) == (1, 1)
    assert first.projection() == projection
    assert first.meta == {k: v for k, v in projection.items() if k != "body"}
    assert first.body_json == projection_json(projection)[1]
    assert first.key == entry_key(projection, None, None) == shared_key(channel, "POST", _URL, raw).key


def test_memo_tells_requests_apart_and_stays_bounded() -> None:
    memo = SharedKeyMemo(limit=2)
    a = memo.get("detector", "POST", _URL, b'{"a":1}')
    assert memo.get("search", "POST", _URL, b'{"a":1}').key != a.key  # channel
    assert memo.get("detector", "GET", _URL, b'{"a":1}').key != a.key  # method
    assert memo.get("detector", "POST", _URL + "&c=3", b'{"a":1}').key != a.key  # URL
    assert memo.get("detector", "POST", _URL, b'{"a":2}').key != a.key  # body
    assert memo.misses == 5 and len(memo._memo) == 2
    assert memo.get("detector", "POST", _URL, b'{"a":1}') == a  # evicted, keyed again: equal


_REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions", content=b"{}")


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Content-Type", "content-length", "X-Id", "Content-Encoding"]),
            st.sampled_from(["a", "identity", "", "gzip, identity", "a;b"]),
        ),
        max_size=4,
    ),
    st.binary(max_size=32),
)
def test_one_shape_builds_many_responses_equal_to_content(
    headers: list[tuple[str, str]], body: bytes
) -> None:
    try:
        expected = httpx.Response(200, headers=headers, content=body, request=_REQUEST)
    except httpx.DecodingError:
        return  # not a body the stored headers could describe
    shape = response_shape(headers, body)
    frozen = None if shape.headers is None else list(shape.headers.multi_items())
    for _ in range(2):
        built = shaped_response(200, shape, body, extensions={}, request=_REQUEST)
        assert response_state(built) == response_state(expected)
        built.headers["X-Changed"] = "1"  # a caller's change must not reach the shape
    assert (None if shape.headers is None else list(shape.headers.multi_items())) == frozen


def _entry(key: str, digest: str | None, headers: dict[str, list[str]]) -> Entry:
    return Entry(
        key=key, channel="detector", request_meta={}, request_body="{}", context=None, occurrence=None,
        method="POST", uri="http://x/", request_headers={}, status=200, reason="OK",
        response_headers=headers, body=b'{"ok":true}', exception=None, latency_ms=3,
        recorded_at="2026-01-01T00:00:00.000000+00:00", digest=digest,
    )  # fmt: skip


def test_shapes_are_kept_by_key_and_verified_digest_only() -> None:
    shapes = ResponseShapes(limit=1)
    entry = _entry("k1", "d1", {"Content-Type": ["application/json"]})
    assert shapes.shape(entry) is shapes.shape(entry)
    changed = _entry("k1", None, {"Content-Type": ["text/plain"]})  # changed since loading
    assert shapes.shape(changed).given == (("Content-Type", "text/plain"),)
    other = _entry("k1", "d2", {"X": ["y"]})
    assert shapes.shape(other).given == (("X", "y"),)
    assert len(shapes._shapes) == 1
    cached = to_response(entry, _REQUEST, from_cassette=True, shapes=shapes)
    assert response_state(cached) == response_state(to_response(entry, _REQUEST, from_cassette=True))


def _detector_body(text: str) -> dict[str, Any]:
    return {"model": "d", "messages": [{"role": "user", "content": text}], "temperature": 0, "max_tokens": 9}


async def _send_all(rr: Any, base_url: str, texts: list[str]) -> list[tuple[str, bytes]]:
    out = []
    async with httpx.AsyncClient(transport=rr.transport("detector"), base_url=base_url) as client:
        for i, text in enumerate(texts):
            with call_context(CallContext("m", f"q{i}", i)):
                response = await client.post(CHAT_PATH, json=_detector_body(text))
            out.append((response.extensions["oracleproto.entry_key"], response.content))
    await rr.aclose()
    return out


def test_replay_of_repeated_shared_requests_serves_the_recorded_entries(tmp_path: Path) -> None:
    """Record distinct detector requests, replay each several times: same keys, same bytes."""
    from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer

    texts = ["a", "b", "a", "c", "b", "a"]
    with LoopbackServer(
        lambda r: LoopbackResponse(body=chat_body(json.loads(r.body)["messages"][0]["content"]))
    ) as server:
        rr = make_rr(tmp_path, "record")
        recorded = asyncio.run(_send_all(rr, server.base_url, texts))
    rr = make_rr(tmp_path, "replay")
    replayed = asyncio.run(_send_all(rr, "http://127.0.0.1:1", texts))
    assert replayed == recorded and len({k for k, _ in replayed}) == 3
    assert (rr._shared_keys.hits, rr._shared_keys.misses) == (3, 3)


def test_a_shared_request_that_misses_reports_its_request(tmp_path: Path) -> None:
    """The miss report rebuilds a memoised request's projection: it names the differing field."""
    import pytest

    from oracleproto.errors import ReplayMissError
    from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer

    with LoopbackServer(lambda r: LoopbackResponse(body=chat_body("x"))) as server:
        asyncio.run(_send_all(make_rr(tmp_path, "record"), server.base_url, ["recorded text"]))
    rr = make_rr(tmp_path, "replay")
    with pytest.raises(ReplayMissError, match=r"replay miss on channel detector(.|\n)*other text"):
        asyncio.run(_send_all(rr, "http://127.0.0.1:1", ["recorded text", "other text"]))
    assert rr._shared_keys.misses == 2
