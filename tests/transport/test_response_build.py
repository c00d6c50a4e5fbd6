"""``body_response`` builds the response ``httpx.Response(content=…)`` builds, without its read pipeline."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.transport.response_build import body_response
from tests.transport.helpers import response_state

_REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions", content=b"{}")
_NAMES = st.sampled_from(["Content-Type", "X-Request-Id", "content-length", "Set-Cookie", "Retry-After"])
_HEADERS = st.lists(st.tuples(_NAMES, st.text("abc123 ;=/", max_size=12)), max_size=5)


def _both(status: int, headers: list[tuple[str, str]], body: bytes) -> tuple[httpx.Response, httpx.Response]:
    ext = {"reason_phrase": b"OK", "oracleproto.latency_ms": 12.5}
    fast = body_response(status, headers, body, extensions=dict(ext), request=_REQUEST)
    slow = httpx.Response(status, headers=headers, content=body, extensions=dict(ext), request=_REQUEST)
    return fast, slow


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([200, 204, 400, 429, 500]), _HEADERS, st.binary(max_size=64))
def test_equal_to_httpx_content_response(status: int, headers: list[tuple[str, str]], body: bytes) -> None:
    fast, slow = _both(status, headers, body)
    assert response_state(fast) == response_state(slow)


def test_encoded_body_still_goes_through_httpx_decoder() -> None:
    import gzip

    body = gzip.compress(b'{"ok": true}')
    fast, slow = _both(200, [("Content-Encoding", "gzip")], body)
    assert fast.content == slow.content == b'{"ok": true}'
    assert response_state(fast) == response_state(slow)


def test_equal_through_an_async_client() -> None:
    """What a provider sees after httpx's client wraps the transport's response."""
    body = b'{"choices": []}'
    headers = [("Content-Type", "application/json"), ("Set-Cookie", "a=b")]

    async def fetch(build: Any) -> dict[str, Any]:
        def handler(request: httpx.Request) -> httpx.Response:
            return build(request)

        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            response = await client.post("http://127.0.0.1/x", json={"a": 1})
            state = response_state(response)
            state["cookies"] = dict(client.cookies)
            state["request"] = (response.request.url, response.request.content)
            return state

    fast = asyncio.run(fetch(lambda r: body_response(200, headers, body, extensions={}, request=r)))
    slow = asyncio.run(fetch(lambda r: httpx.Response(200, headers=headers, content=body, request=r)))
    assert fast == slow
