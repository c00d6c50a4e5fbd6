"""The run's channels hold a concurrency slot only while a request is on the wire.

A call sleeping before its retry (a 429's backoff) must leave the channel's slot to another
call: with the cap at 1, a second call completes while the first sleeps. Checked on the chat
client alone and on the channels a run opens (``open_channels``), whose caps come from settings.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

import httpx

from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers import OpenAIChatClient
from oracleproto.providers.types import ChatModel
from oracleproto.runner.channels import open_channels
from oracleproto.settings.model import LLMSettings
from oracleproto.sim.harness import ServedSimulator, SimRunSpec, simulated_settings
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from tests.transport.helpers import chat_body, make_rr

#: Long enough never to fire on a loaded machine; a slot held while sleeping fails here, not hangs.
DEADLINE_S = 60.0


class GatedSleepClock(FakeClock):
    """A fake clock whose sleeps wait for ``wake`` (a retry's backoff, held open by the test)."""

    def __init__(self) -> None:
        super().__init__(datetime(2026, 1, 1, tzinfo=UTC))
        self.wake = asyncio.Event()
        self.sleeping = asyncio.Event()

    async def sleep(self, seconds: float) -> None:
        """Signal the sleep, wait to be woken, then advance the fake time."""
        self.sleeping.set()
        await self.wake.wait()
        await super().sleep(seconds)


def _throttle_first(seen: list[str]) -> object:
    def chat(request: LoopbackRequest) -> LoopbackResponse:
        prompt = json.loads(request.body)["messages"][-1]["content"]
        seen.append(prompt)
        if prompt == "throttled" and seen.count("throttled") == 1:
            return LoopbackResponse(status=429, body=b'{"error": {"message": "slow down"}}')
        return LoopbackResponse(body=chat_body(prompt.upper()))

    return chat


async def _sleeping_call_leaves_the_slot(chat: ChatModel, clock: GatedSleepClock, model: str) -> None:
    async def ask(prompt: str, sample: int) -> str | None:
        with call_context(CallContext(model, "q", sample)):
            reply = await chat.complete(model, [{"role": "user", "content": prompt}], [])
        return reply.content

    throttled = asyncio.create_task(ask("throttled", 0))
    await asyncio.wait_for(clock.sleeping.wait(), DEADLINE_S)
    # The throttled call sleeps before its retry; the channel's only slot serves another call.
    assert await asyncio.wait_for(ask("free", 1), DEADLINE_S) == "FREE"
    clock.wake.set()
    assert await asyncio.wait_for(throttled, DEADLINE_S) == "THROTTLED"


async def test_the_chat_client_sleeps_without_the_slot(tmp_path: Path) -> None:
    seen: list[str] = []
    clock = GatedSleepClock()
    with LoopbackServer(_throttle_first(seen)) as server:  # type: ignore[arg-type]
        settings = LLMSettings.from_values({"base_url": server.base_url + "/v1", "models": ["m"]})
        rr = make_rr(tmp_path, "record")
        http = httpx.AsyncClient(transport=rr.transport("llm", max_in_flight=1))
        client = OpenAIChatClient(http, settings, clock, api_key="sk-test-planted-fake-0001")
        await _sleeping_call_leaves_the_slot(client, clock, "m")
        await http.aclose()
        await rr.aclose()
    assert seen == ["throttled", "free", "throttled"]


async def test_a_run_s_channels_take_their_caps_from_settings(tmp_path: Path) -> None:
    seen: list[str] = []
    clock = GatedSleepClock()
    with LoopbackServer(_throttle_first(seen)) as server:  # type: ignore[arg-type]
        spec = SimRunSpec(models=1, samples=1, runs_root=tmp_path)
        base = simulated_settings(ServedSimulator(server.base_url), spec)
        settings = base.model_copy(update={"llm": base.llm.model_copy(update={"max_concurrency": 1})})
        rr = make_rr(tmp_path / "cassettes", "record")
        channels = open_channels(settings, rr, clock, live=True)
        model = settings.llm.models[0]
        await _sleeping_call_leaves_the_slot(channels.chat, clock, model)
        await channels.aclose()
        await rr.aclose()
    assert seen == ["throttled", "free", "throttled"]


async def test_a_run_s_searches_are_capped_at_the_paper_s_five(tmp_path: Path) -> None:
    gate = threading.Event()
    lock = threading.Lock()
    arrived: list[str] = []

    def tavily(request: LoopbackRequest) -> LoopbackResponse:
        with lock:
            arrived.append(json.loads(request.body)["query"])
        gate.wait(DEADLINE_S)
        return LoopbackResponse(body=json.dumps({"query": "q", "answer": None, "results": []}).encode())

    with LoopbackServer(tavily) as server:
        spec = SimRunSpec(models=1, samples=1, runs_root=tmp_path)
        settings = simulated_settings(ServedSimulator(server.base_url), spec)
        assert settings.search.max_concurrency == 5
        rr = make_rr(tmp_path / "cassettes", "record")
        channels = open_channels(settings, rr, FakeClock(), live=True)
        assert channels.search is not None
        search = channels.search

        async def one(i: int) -> None:
            with call_context(CallContext("m", f"q{i}", 0)):
                outcome = await search.search(f"query {i}", date(2026, 1, 1), 5)
            assert outcome.error_kind is None

        calls = [asyncio.create_task(one(i)) for i in range(12)]
        await asyncio.wait_for(_until(lambda: len(arrived) == 5), DEADLINE_S)
        await asyncio.sleep(0.2)
        assert len(arrived) == 5  # the other seven wait for a slot
        gate.set()
        await asyncio.wait_for(asyncio.gather(*calls), DEADLINE_S)
        await channels.aclose()
        await rr.aclose()
    assert len(arrived) == 12


async def _until(done: Callable[[], bool]) -> None:
    while not done():
        await asyncio.sleep(0.01)
