"""Tavily search through tavily-python over loopback HTTP, with the key pool (paper Table 11)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from oracleproto.context import current_logical_call
from oracleproto.errors import AuthError, ConfigError, ErrorKind
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.keypool import TavilyKeyPool
from oracleproto.providers.search import TavilySearch, parse_results, search_failure_kind
from oracleproto.settings.model import SearchSettings
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from oracleproto.transport.extensions import LATENCY_MS, RECORDED_AT
from tests.providers.payloads import all_interactions
from tests.providers.scripted import Script, json_response

KEY_A = "fake-tavily-key-a"
KEY_B = "fake-tavily-key-b"
CUTOFF = date(2025, 3, 14)


def tavily_body(n: int = 2, **extra: Any) -> dict[str, Any]:
    results = [
        {
            "title": f"t{i}",
            "url": f"https://example.org/{i}",
            "content": f"c{i}",
            "raw_content": f"raw{i}",
            "published_date": f"2025-01-0{i + 1}",
            "score": 0.5,
        }
        for i in range(n)
    ]
    return {"query": "q", "answer": None, "results": results, **extra}


def settings(server: LoopbackServer, **kw: Any) -> SearchSettings:
    return SearchSettings(_env_file=None, base_url=server.base_url, **kw)  # type: ignore[call-arg]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def by_key(responses: dict[str, list[LoopbackResponse]]) -> Script:
    """Serve per-key queues (the last response of a queue repeats)."""
    served: dict[str, int] = {}

    def handle(request: LoopbackRequest) -> LoopbackResponse:
        key = request.headers.get("authorization", "").removeprefix("Bearer ")
        queue = responses[key]
        index = served.get(key, 0)
        served[key] = index + 1
        return queue[min(index, len(queue) - 1)]

    return Script(handle)


def keys(script: Script) -> list[str]:
    return [r.headers["authorization"].removeprefix("Bearer ") for r in script.requests]


async def test_request_follows_the_protocol(http: httpx.AsyncClient) -> None:
    script = Script(json_response(tavily_body()))
    with LoopbackServer(script) as server:
        search = TavilySearch(http, settings(server), TavilyKeyPool([KEY_A], FakeClock()), FakeClock())
        outcome = await search.search("rain in Paris", CUTOFF, 5)
        await search.aclose()
    request = script.requests[0]
    assert request.path == "/search" and request.headers["authorization"] == f"Bearer {KEY_A}"
    body = json.loads(request.body)
    assert body == {
        "query": "rain in Paris",
        "search_depth": "basic",
        "end_date": "2025-03-14",
        "max_results": 5,
        "include_answer": False,
        "include_raw_content": True,
    }
    assert KEY_A not in request.body.decode()
    assert [r.title for r in outcome.results] == ["t0", "t1"]
    assert outcome.published_dates_raw == ("2025-01-01", "2025-01-02")
    assert outcome.error_kind is None and outcome.audit is None
    assert outcome.to_record()["end_date"] == "2025-03-14"
    # the shared client is not modified by tavily-python
    assert "authorization" not in http.headers and str(http.base_url) == ""


async def test_text_fields_are_truncated(http: httpx.AsyncClient) -> None:
    long = tavily_body(2)
    long["results"][0].update(content="x" * 9000, raw_content="y" * 20000)
    script = Script(json_response(long))
    with LoopbackServer(script) as server:
        search = TavilySearch(http, settings(server), TavilyKeyPool([KEY_A], FakeClock()), FakeClock())
        outcome = await search.search("q", CUTOFF, 5)
    result = outcome.results[0]
    assert len(result.content) == 8000 and result.raw_content is not None and len(result.raw_content) == 8000
    # The cut is counted so the tool message can say how much of the page is missing.
    assert result.raw_content_cut == 12_000 and outcome.results[1].raw_content_cut == 0


def test_scores_are_finite_floats_or_none() -> None:
    body = tavily_body(5)
    for item, score in zip(body["results"], [0.25, 1, True, float("nan"), "0.9"], strict=True):
        item["score"] = score
    assert [r.score for r in parse_results(body, 8000)] == [0.25, 1.0, None, None, None]


async def test_recorded_latency_survives_the_forwarding_client() -> None:
    class Stamping(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            response = await super().handle_async_request(request)
            stamps = {LATENCY_MS: 321, RECORDED_AT: "2025-05-06T07:08:09+00:00"}
            response.extensions = {**response.extensions, **stamps}
            return response

    script = Script(json_response(tavily_body()))
    async with httpx.AsyncClient(transport=Stamping()) as http:
        with LoopbackServer(script) as server:
            search = TavilySearch(http, settings(server), TavilyKeyPool([KEY_A], FakeClock()), FakeClock())
            outcome = await search.search("q", CUTOFF, 5)
    assert outcome.latency_ms == 321


# --- key pool units ---------------------------------------------------------------------------


def test_pool_dispatches_least_used_then_by_position() -> None:
    pool = TavilyKeyPool([KEY_A, KEY_B, "fake-tavily-key-c"], FakeClock())
    picks = []
    for _ in range(5):
        lease = pool.acquire()
        assert lease is not None
        picks.append(lease.index)
    assert picks == [0, 1, 2, 0, 1]
    assert pool.usage_counts == (2, 2, 1)


def test_pool_blacklist_cooldown_and_all_dead() -> None:
    clock = FakeClock()
    pool = TavilyKeyPool([SecretStr(KEY_A), SecretStr(KEY_B)], clock)
    a = pool.acquire()
    b = pool.acquire()
    assert a is not None and b is not None
    pool.report_rate_limited(a, 60)
    assert [pool.acquire().index for _ in range(2)] == [1, 1]  # type: ignore[union-attr]
    pool.report_auth_failure(b)
    assert pool.acquire() is None and pool.seconds_until_available() == 60
    clock.advance(60)
    lease = pool.acquire()
    assert lease is not None and lease.index == 0
    assert KEY_A not in lease.redacted and lease.redacted.startswith("fake")
    pool.report_auth_failure(lease)
    with pytest.raises(AuthError, match="all 2 Tavily key"):
        pool.acquire()


def test_empty_pool_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="TAVILY_API_KEY"):
        TavilyKeyPool(["", "  "], FakeClock())


def test_search_failure_kinds() -> None:
    quota, rate = ErrorKind.QUOTA, ErrorKind.RATE_LIMIT
    assert search_failure_kind(429, b"") is rate
    assert search_failure_kind(400, b'{"detail": {"error": "Too many requests, slow down"}}') is rate
    assert search_failure_kind(432, b"") is quota
    assert search_failure_kind(433, b"") is quota
    assert search_failure_kind(400, b'{"detail": {"error": "Usage limit exceeded for this key"}}') is quota
    assert search_failure_kind(401, b"usage limit") is ErrorKind.AUTH
    assert search_failure_kind(400, b'{"detail": {"error": "Invalid query"}}') is ErrorKind.BAD_REQUEST
    assert search_failure_kind(500, b"quota") is ErrorKind.SERVER_5XX


# --- Table 11 over the wire -------------------------------------------------------------------


async def test_auth_blacklists_and_swaps_without_backoff(
    http: httpx.AsyncClient, shared_payloads: Path
) -> None:
    real_401 = next(i for i in all_interactions(shared_payloads) if i.is_tavily and i.status == 401)
    clock = FakeClock()
    script = by_key(
        {
            KEY_A: [LoopbackResponse(status=401, body=real_401.body)],
            KEY_B: [json_response(tavily_body())],
        }
    )
    with LoopbackServer(script) as server:
        pool = TavilyKeyPool([KEY_A, KEY_B], clock)
        search = TavilySearch(http, settings(server), pool, clock)
        first = await search.search("q", CUTOFF, 5)
        second = await search.search("q", CUTOFF, 5)
    assert first.error_kind is None and second.error_kind is None
    assert keys(script) == [KEY_A, KEY_B, KEY_B]
    assert clock.sleeps == []
    assert pool.blacklisted == (True, False)


async def test_all_keys_rejected_raises_auth_error_without_the_key(http: httpx.AsyncClient) -> None:
    script = Script(json_response({"detail": {"error": "Invalid API Key."}}, status=401))
    with LoopbackServer(script) as server:
        search = TavilySearch(http, settings(server), TavilyKeyPool([KEY_A, KEY_B], FakeClock()), FakeClock())
        with pytest.raises(AuthError) as info:
            await search.search("q", CUTOFF, 5)
    assert len(script.requests) == 2
    assert KEY_A not in str(info.value) and KEY_B not in str(info.value)


@pytest.mark.parametrize(
    "limited",
    [
        json_response({"detail": {"error": "rate limited"}}, status=429),
        json_response({"detail": {"error": "Rate limit exceeded, slow down"}}, status=400),
    ],
)
async def test_rate_limit_cools_the_key_and_swaps_without_a_retry(
    http: httpx.AsyncClient, limited: LoopbackResponse
) -> None:
    clock = FakeClock()
    script = by_key({KEY_A: [limited, json_response(tavily_body())], KEY_B: [json_response(tavily_body())]})
    with LoopbackServer(script) as server:
        pool = TavilyKeyPool([KEY_A, KEY_B], clock)
        search = TavilySearch(http, settings(server, retry_max=0), pool, clock)
        assert (await search.search("q", CUTOFF, 5)).error_kind is None
        assert (await search.search("q", CUTOFF, 5)).error_kind is None  # A still cooling: B again
        clock.advance(60)
        assert (await search.search("q", CUTOFF, 5)).error_kind is None  # A is back (least used)
    assert keys(script) == [KEY_A, KEY_B, KEY_B, KEY_A]
    assert clock.sleeps == []
    assert pool.blacklisted == (False, False)


async def test_single_rate_limited_key_waits_out_its_cooldown(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(json_response({}, status=429), json_response(tavily_body()))
    with LoopbackServer(script) as server:
        search = TavilySearch(http, settings(server), TavilyKeyPool([KEY_A], clock), clock)
        outcome = await search.search("q", CUTOFF, 5)
    assert outcome.error_kind is None and clock.sleeps == [60.0]


async def test_pool_that_stays_rate_limited_ends_the_call(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(json_response({}, status=429))
    with LoopbackServer(script) as server:
        search = TavilySearch(http, settings(server, retry_max=2), TavilyKeyPool([KEY_A], clock), clock)
        outcome = await search.search("q", CUTOFF, 5)
    assert outcome.error_kind == "rate_limit" and outcome.results == ()
    assert clock.sleeps == [60.0, 60.0, 60.0]
    assert outcome.to_record()["n_results"] == 0 and outcome.to_record()["error_kind"] == "rate_limit"


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        (json_response({"detail": "boom"}, status=502), "server_5xx"),
        (LoopbackResponse(drop_connection=True), "network"),
        (LoopbackResponse(status=200, body=b"<html>maintenance</html>"), "unknown"),
    ],
)
async def test_other_failures_consume_retries_with_backoff(
    http: httpx.AsyncClient, failure: LoopbackResponse, kind: str
) -> None:
    clock = FakeClock()
    script = Script(failure)
    with LoopbackServer(script) as server:
        pool = TavilyKeyPool([KEY_A, KEY_B], clock)
        search = TavilySearch(http, settings(server), pool, clock)
        outcome = await search.search("q", CUTOFF, 5)
    assert outcome.error_kind == kind
    assert clock.sleeps == [2, 5, 15] and len(script.requests) == 4
    assert pool.blacklisted == (False, False)


async def test_retry_then_success_keeps_one_logical_call() -> None:
    attempts: list[int] = []

    async def hook(request: httpx.Request) -> None:
        call = current_logical_call()
        assert call is not None
        attempts.append(call.attempt)

    clock = FakeClock()
    script = Script(
        json_response({}, status=503), json_response({}, status=429), json_response(tavily_body())
    )
    async with httpx.AsyncClient(event_hooks={"request": [hook]}) as http:
        with LoopbackServer(script) as server:
            search = TavilySearch(http, settings(server), TavilyKeyPool([KEY_A, KEY_B], clock), clock)
            outcome = await search.search("q", CUTOFF, 5)
    assert outcome.error_kind is None
    assert attempts == [0, 1, 2] and clock.sleeps == [2]


async def test_bad_request_is_final(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(json_response({"detail": {"error": "Invalid end_date"}}, status=400))
    with LoopbackServer(script) as server:
        search = TavilySearch(http, settings(server), TavilyKeyPool([KEY_A], clock), clock)
        outcome = await search.search("q", CUTOFF, 5)
    assert outcome.error_kind == "bad_request" and len(script.requests) == 1 and clock.sleeps == []


async def test_usage_accumulates_across_clients_sharing_the_pool(http: httpx.AsyncClient) -> None:
    script = Script(json_response(tavily_body()))
    with LoopbackServer(script) as server:
        pool = TavilyKeyPool([KEY_A, KEY_B], FakeClock())
        one = TavilySearch(http, settings(server), pool, FakeClock())
        two = TavilySearch(http, settings(server), pool, FakeClock())
        await one.search("q", CUTOFF, 5)
        await two.search("q", CUTOFF, 5)
        await two.search("q", CUTOFF, 5)
    assert pool.usage_counts == (2, 1)
    assert keys(script) == [KEY_A, KEY_B, KEY_A]


async def test_real_tavily_responses_parse(http: httpx.AsyncClient, shared_payloads: Path) -> None:
    items = [i for i in all_interactions(shared_payloads) if i.is_tavily and i.status == 200]
    assert len(items) >= 10
    script = Script(*(LoopbackResponse(status=200, body=i.body) for i in items))
    with LoopbackServer(script) as server:
        search = TavilySearch(http, settings(server), TavilyKeyPool([KEY_A], FakeClock()), FakeClock())
        for item in items:
            outcome = await search.search("q", CUTOFF, 5)
            raw = json.loads(item.body)
            assert outcome.error_kind is None, item.source
            assert [r.url for r in outcome.results] == [r["url"] for r in raw["results"]], item.source
            assert outcome.answer is None
            assert len(outcome.published_dates_raw) == len(outcome.results)
