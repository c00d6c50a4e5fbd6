"""Backoff positions belong to the sample (paper App. B.7): continued across its calls, reset per sample."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.backoff import BackoffCursor, backoff_cursor, sample_backoff
from oracleproto.providers.detector import LeakDetector
from oracleproto.providers.keypool import TavilyKeyPool
from oracleproto.providers.llm import OpenAIChatClient
from oracleproto.providers.search import TavilySearch
from oracleproto.providers.types import SearchResult
from oracleproto.settings.model import DetectorSettings, LLMSettings, SearchSettings
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from oracleproto.transport import RecordReplay
from tests.providers.scripted import Script, chat_body, json_response

KEY = "sk-test-0123456789abcdef"
CUTOFF = date(2025, 3, 14)
UNAVAILABLE = json_response({"error": "busy"}, status=503)
VERDICT = json_response(chat_body(json.dumps({"verdict": "keep", "reason": "ok"})))
RESULT = SearchResult(
    title="t", url="https://example.org/a", content="c", raw_content=None, published_date=None, score=None
)


def first_try_fails(success: LoopbackResponse) -> Script:
    """Answer 503 the first time a request body arrives and ``success`` every later time."""
    seen: set[bytes] = set()
    lock = threading.Lock()

    def handle(request: LoopbackRequest) -> LoopbackResponse:
        with lock:
            fresh = request.body not in seen
            seen.add(request.body)
        return UNAVAILABLE if fresh else success

    return Script(handle)


def tavily_body() -> dict[str, Any]:
    return {"query": "q", "answer": None, "results": []}


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def chat_client(http: httpx.AsyncClient, server: LoopbackServer, clock: FakeClock) -> OpenAIChatClient:
    llm = LLMSettings.from_values({"base_url": server.base_url + "/v1"})
    return OpenAIChatClient(http, llm, clock, api_key=KEY)


def ask(text: str) -> list[dict[str, Any]]:
    return [{"role": "user", "content": text}]


def test_cursor_counts_per_channel_and_sequence() -> None:
    cursor = BackoffCursor()
    assert [cursor.take("llm", "network") for _ in range(3)] == [0, 1, 2]
    assert cursor.take("llm", "rate_limit") == 0
    assert cursor.take("search", "backoff") == 0
    assert cursor.taken("llm", "network") == 3 and cursor.taken("detector", "backoff") == 0


def test_outside_a_sample_every_call_gets_a_fresh_cursor() -> None:
    assert backoff_cursor() is not backoff_cursor()
    with sample_backoff() as cursor:
        assert backoff_cursor() is cursor
    assert backoff_cursor() is not cursor


async def test_llm_calls_of_one_sample_continue_the_sequence_and_a_new_sample_restarts(
    http: httpx.AsyncClient,
) -> None:
    clock = FakeClock()
    with LoopbackServer(first_try_fails(json_response(chat_body()))) as server:
        chat = chat_client(http, server, clock)
        with sample_backoff():
            await chat.complete("m", ask("step 0"), [])
            await chat.complete("m", ask("step 1"), [])
        assert clock.sleeps == [5, 15]  # the second call's retry takes the 5xx sequence's 2nd entry
        with sample_backoff():
            await chat.complete("m", ask("next sample"), [])
        assert clock.sleeps == [5, 15, 5]  # a new sample starts from the first entry


async def test_without_a_sample_each_call_starts_over(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    with LoopbackServer(first_try_fails(json_response(chat_body()))) as server:
        chat = chat_client(http, server, clock)
        await chat.complete("m", ask("a"), [])
        await chat.complete("m", ask("b"), [])
    assert clock.sleeps == [5, 5]


async def test_concurrent_samples_keep_their_own_positions(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    cursors: dict[int, BackoffCursor] = {}
    with LoopbackServer(first_try_fails(json_response(chat_body()))) as server:
        chat = chat_client(http, server, clock)

        async def sample(index: int) -> None:
            with sample_backoff() as cursor:
                cursors[index] = cursor
                for step in range(2):
                    await chat.complete("m", ask(f"sample {index} step {step}"), [])

        await asyncio.gather(*(sample(i) for i in range(3)))
    assert all(cursor.taken("llm", "server_5xx") == 2 for cursor in cursors.values())
    # One shared position would have slept 5, 15, 30, 60, 120, 120 in some order.
    assert sorted(clock.sleeps) == [5, 5, 5, 15, 15, 15]


async def test_search_calls_of_one_sample_continue_the_sequence(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    with LoopbackServer(first_try_fails(json_response(tavily_body()))) as server:
        settings = SearchSettings.from_values({"base_url": server.base_url})
        search = TavilySearch(http, settings, TavilyKeyPool([SecretStr("fake-tavily-key-a")], clock), clock)
        with sample_backoff():
            await search.search("first query", CUTOFF, 5)
            await search.search("second query", CUTOFF, 5)
        with sample_backoff():
            await search.search("third query", CUTOFF, 5)
        await search.aclose()
    assert clock.sleeps == [2, 5, 2]


async def test_detector_items_of_one_sample_continue_the_sequence(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    with LoopbackServer(first_try_fails(VERDICT)) as server:
        llm = LLMSettings.from_values({"base_url": server.base_url + "/v1", "api_key": KEY})
        detector = LeakDetector(http, DetectorSettings.from_values({"model": "aux/detector"}), llm, clock)
        with sample_backoff():
            await detector.judge(RESULT, CUTOFF)
            await detector.judge(RESULT, date(2025, 3, 15))
        with sample_backoff():
            await detector.judge(RESULT, date(2025, 3, 16))
    assert clock.sleeps == [2, 5, 2]


async def test_a_shared_search_consumes_only_the_sequence_of_the_sample_that_sent_it(
    http: httpx.AsyncClient, tmp_path: Path
) -> None:
    clock = FakeClock()
    script = first_try_fails(json_response(tavily_body()))
    cursors: dict[int, BackoffCursor] = {}
    with LoopbackServer(script) as server:
        settings = SearchSettings.from_values({"base_url": server.base_url})
        cache = RecordReplay(tmp_path, clock=clock, mode="record")
        async with cache, httpx.AsyncClient(transport=cache.transport("search")) as shared_http:
            pool = TavilyKeyPool([SecretStr("fake-tavily-key-a")], clock)
            search = TavilySearch(shared_http, settings, pool, clock)

            async def sample(index: int) -> None:
                with sample_backoff() as cursor, call_context(CallContext("m::r5::c4", "q", index)):
                    cursors[index] = cursor
                    await search.search("the same query", CUTOFF, 5)

            await asyncio.gather(sample(0), sample(1))
            await search.aclose()
    # One live call (a 503, then its retry); the other sample waited for or reused its outcome.
    assert len(script.requests) == 2
    assert clock.sleeps == [2]
    assert sorted(c.taken("search", "backoff") for c in cursors.values()) == [0, 1]
