"""``RecordReplay(live_gate=…)``: only live attempts pass through the gate (a call served from the
cassettes costs nothing and takes no token), each with its channel, and a gate that refuses stops the
call before anything is sent or recorded."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
import pytest

from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.spend_cap import SpendCapError
from oracleproto.transport import RecordReplay
from oracleproto.transport.keys import Channel

SEARCH = "http://127.0.0.1:9/search"


class CountingGate:
    """Lets every call go, noting its channel; refuses when told to."""

    def __init__(self) -> None:
        self.seen: list[Channel] = []
        self.refuse = False

    async def around(
        self, channel: Channel, request: httpx.Request, send: Callable[[], Awaitable[httpx.Response]]
    ) -> httpx.Response:
        if self.refuse:
            raise SpendCapError("no budget left")
        self.seen.append(channel)
        return await send()


async def test_only_live_attempts_pass_through_the_gate(tmp_path: Path) -> None:
    sent: list[bytes] = []

    def provider(request: httpx.Request) -> httpx.Response:
        sent.append(request.content)
        return httpx.Response(
            200, json={"results": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
        )

    gate = CountingGate()
    rr = RecordReplay(
        tmp_path / "cassettes",
        clock=FakeClock(),
        mode="record",
        inner=httpx.MockTransport(provider),
        live_gate=gate,
    )
    async with httpx.AsyncClient(transport=rr.transport("search")) as search:
        await search.post(SEARCH, json={"query": "q1"})
        await search.post(SEARCH, json={"query": "q1"})  # the same request: served from the cassette
    async with httpx.AsyncClient(transport=rr.transport("llm")) as llm:
        with call_context(CallContext("m", "q", 0)):
            await llm.post("http://127.0.0.1:9/v1/chat/completions", json={"model": "m", "messages": []})
    assert gate.seen == ["search", "llm"] and len(sent) == 2
    gate.refuse = True
    async with httpx.AsyncClient(transport=rr.transport("search")) as search:
        with pytest.raises(SpendCapError):
            await search.post(SEARCH, json={"query": "q2"})
        await search.post(SEARCH, json={"query": "q1"})  # still served: a recorded call costs nothing
    await rr.aclose()
    assert len(sent) == 2  # the refused call was never sent
    assert b"q2" not in b"".join(p.read_bytes() for p in (tmp_path / "cassettes").rglob("*") if p.is_file())
