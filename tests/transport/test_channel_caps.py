"""A channel's concurrency cap counts requests on the wire, nothing else.

Calls served from the cassettes, calls waiting for an identical call in flight and a retry's
backoff sleep hold no slot, so they never keep a provider's slot idle (the backoff case:
tests/runner/test_channel_slots.py). Each test holds requests
at the server behind a gate (no timing): what must get through while the slots are taken does,
and what must wait does.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import httpx
import pytest

from oracleproto.context import CallContext, call_context
from oracleproto.errors import ConfigError
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from tests.transport.helpers import make_rr

#: Long enough never to fire on a loaded machine; a broken cap makes the test fail here, not hang.
DEADLINE_S = 60.0


class GatedServer:
    """Answers searches; a query listed in ``held`` waits at the server until ``release``."""

    def __init__(self, held: set[str]) -> None:
        self.held = held
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.arrived: list[str] = []
        self.on_wire = 0
        self.most_on_wire = 0

    def __call__(self, request: LoopbackRequest) -> LoopbackResponse:
        query = json.loads(request.body)["query"]
        with self.lock:
            self.arrived.append(query)
            self.on_wire += 1
            self.most_on_wire = max(self.most_on_wire, self.on_wire)
        if query in self.held or "*" in self.held:
            self.gate.wait(DEADLINE_S)
        with self.lock:
            self.on_wire -= 1
        return LoopbackResponse(body=json.dumps({"query": query, "results": []}).encode())

    def release(self) -> None:
        self.gate.set()


async def _until(predicate: object) -> None:
    async def poll() -> None:
        while not predicate():  # type: ignore[operator]
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), DEADLINE_S)


async def _search(client: httpx.AsyncClient, query: str, sample: int) -> str:
    with call_context(CallContext("m", "q", sample)):
        response = await client.post("/search", json={"query": query})
    return str(json.loads(response.content)["query"])


async def test_live_sends_never_exceed_the_cap(tmp_path: Path) -> None:
    server_state = GatedServer({"*"})
    with LoopbackServer(server_state) as server:
        rr = make_rr(tmp_path, "record")
        transport = rr.transport("search", max_in_flight=3)
        async with httpx.AsyncClient(transport=transport, base_url=server.base_url) as client:
            calls = [asyncio.create_task(_search(client, f"q{i}", i)) for i in range(8)]
            await _until(lambda: len(server_state.arrived) == 3)
            # Every other call is queued for a slot: none reaches the server while three are held.
            await asyncio.sleep(0.2)
            assert len(server_state.arrived) == 3
            server_state.release()
            answers = await asyncio.wait_for(asyncio.gather(*calls), DEADLINE_S)
        await rr.aclose()
    assert answers == [f"q{i}" for i in range(8)]
    assert server_state.most_on_wire == 3
    assert len(server_state.arrived) == 8


async def test_a_call_served_from_the_cassettes_takes_no_slot(tmp_path: Path) -> None:
    server_state = GatedServer({"held"})
    with LoopbackServer(server_state) as server:
        rr = make_rr(tmp_path, "record")
        transport = rr.transport("search", max_in_flight=1)
        async with httpx.AsyncClient(transport=transport, base_url=server.base_url) as client:
            assert await _search(client, "recorded", 0) == "recorded"
            held = asyncio.create_task(_search(client, "held", 1))
            await _until(lambda: "held" in server_state.arrived)
            # The only slot is on the wire; the recorded search (another sample) is served anyway.
            assert await asyncio.wait_for(_search(client, "recorded", 2), DEADLINE_S) == "recorded"
            assert not held.done()
            server_state.release()
            assert await asyncio.wait_for(held, DEADLINE_S) == "held"
        await rr.aclose()
    assert server_state.arrived == ["recorded", "held"]


async def test_a_call_waiting_for_an_identical_one_takes_no_slot(tmp_path: Path) -> None:
    server_state = GatedServer({"same"})
    with LoopbackServer(server_state) as server:
        rr = make_rr(tmp_path, "record")
        transport = rr.transport("search", max_in_flight=2)
        async with httpx.AsyncClient(transport=transport, base_url=server.base_url) as client:
            first = asyncio.create_task(_search(client, "same", 0))
            await _until(lambda: server_state.arrived == ["same"])
            twin = asyncio.create_task(_search(client, "same", 1))
            await asyncio.sleep(0.05)
            # The twin waits for the call in flight; the second slot is free for a different search.
            assert await asyncio.wait_for(_search(client, "other", 2), DEADLINE_S) == "other"
            server_state.release()
            assert await asyncio.wait_for(asyncio.gather(first, twin), DEADLINE_S) == ["same", "same"]
        await rr.aclose()
    assert server_state.arrived == ["same", "other"]
    assert rr.session_stats()["search"]["waited"] == 1


def test_a_cap_below_one_is_refused(tmp_path: Path) -> None:
    rr = make_rr(tmp_path, "record")
    with pytest.raises(ConfigError, match="max_in_flight for llm must be at least 1"):
        rr.transport("llm", max_in_flight=0)
    rr.close()
