"""Provider limits over loopback HTTP: quota stops at once, waits are capped and reported (issue 11)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date

import httpx
import pytest
from pydantic import SecretStr

from oracleproto.errors import ErrorKind, ProviderUnavailableError, QuotaError
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.detector import LeakDetector
from oracleproto.providers.keypool import TavilyKeyPool
from oracleproto.providers.llm import OpenAIChatClient
from oracleproto.providers.monitor import CallFailure, NullMonitor
from oracleproto.providers.search import TavilySearch
from oracleproto.providers.types import SearchResult
from oracleproto.settings.model import DetectorSettings, LLMSettings, SearchSettings
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from tests.providers.scripted import Script, chat_body, json_response

KEY = "sk-test-0123456789abcdef"
KEY_A = "fake-tavily-key-a"
KEY_B = "fake-tavily-key-b"
CUTOFF = date(2025, 3, 14)
MESSAGES = [{"role": "user", "content": "Will it rain?"}]
QUOTA_429 = json_response(
    {
        "error": {
            "message": "No credit left.",
            "type": "insufficient_quota",
            "param": None,
            "code": "insufficient_quota",
        }
    },
    status=429,
)


class Recorder(NullMonitor):
    """A monitor that keeps what it is told."""

    def __init__(self, cap: float = 300.0) -> None:
        super().__init__(cap)
        self.waits: list[tuple[str, str, str, float]] = []
        self.outcomes: list[tuple[str, CallFailure | None]] = []

    def waiting(self, channel: str, model: str, reason: str, seconds: float) -> None:
        self.waits.append((channel, model, reason, seconds))

    def call_done(self, channel: str, failure: CallFailure | None) -> None:
        self.outcomes.append((channel, failure))


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def chat(
    http: httpx.AsyncClient, server: LoopbackServer, clock: FakeClock, monitor: Recorder
) -> OpenAIChatClient:
    settings = LLMSettings(_env_file=None)  # type: ignore[call-arg]
    return OpenAIChatClient(
        http, settings, clock, base_url=server.base_url + "/v1", api_key=KEY, monitor=monitor
    )


async def test_insufficient_quota_stops_at_once_with_what_to_do(http: httpx.AsyncClient) -> None:
    clock, monitor = FakeClock(), Recorder()
    script = Script(QUOTA_429)
    with LoopbackServer(script) as server, pytest.raises(QuotaError) as info:
        await chat(http, server, clock, monitor).complete("m/x", MESSAGES, [])
    assert len(script.requests) == 1 and clock.sleeps == []  # not retried as a rate limit
    error = info.value
    assert error.kind is ErrorKind.QUOTA and error.channel == "llm" and error.status_code == 429
    assert "m/x" in str(error) and "127.0.0.1" in str(error) and "top up" in error.remedy
    assert KEY not in str(error)


@pytest.mark.parametrize(
    "limited",
    [
        pytest.param(json_response({}, status=429, headers={"Retry-After": "3600"}), id="retry-after-header"),
        pytest.param(
            json_response(
                {"error": {"code": "429", "message": "Please retry after 86400 seconds."}}, status=429
            ),
            id="azure-body",
        ),
    ],
)
async def test_a_wait_above_the_cap_stops_without_sleeping(
    http: httpx.AsyncClient, limited: LoopbackResponse
) -> None:
    clock, monitor = FakeClock(), Recorder(cap=300)
    script = Script(limited, json_response(chat_body()))
    with LoopbackServer(script) as server, pytest.raises(ProviderUnavailableError) as info:
        await chat(http, server, clock, monitor).complete("m/x", MESSAGES, [])
    assert clock.sleeps == [] and len(script.requests) == 1
    assert "RETRY_AFTER_MAX_S=300" in str(info.value) and info.value.channel == "llm"
    assert "raise RETRY_AFTER_MAX_S" in info.value.remedy


async def test_a_wait_below_the_cap_is_reported_then_slept(http: httpx.AsyncClient) -> None:
    clock, monitor = FakeClock(), Recorder(cap=300)
    script = Script(json_response({}, status=429, headers={"Retry-After": "120"}), json_response(chat_body()))
    with LoopbackServer(script) as server:
        reply = await chat(http, server, clock, monitor).complete("m/x", MESSAGES, [])
    assert reply.content == "hi" and clock.sleeps == [120.0]
    assert monitor.waits == [("llm", "m/x", "rate_limit, Retry-After", 120.0)]
    assert monitor.outcomes == [("llm", None)]


async def test_terminal_network_failure_is_reported_for_the_breaker(http: httpx.AsyncClient) -> None:
    clock, monitor = FakeClock(), Recorder()
    with LoopbackServer(Script(LoopbackResponse(drop_connection=True))) as server:
        client = chat(http, server, clock, monitor)
    # The server is gone: every attempt is refused.
    with pytest.raises(Exception, match="retries exhausted"):
        await client.complete("m/x", MESSAGES, [])
    assert len(monitor.outcomes) == 1
    channel, failure = monitor.outcomes[0]
    assert channel == "llm" and failure is not None
    assert failure.kind is ErrorKind.NETWORK and failure.signature == "ConnectError"
    assert [w[2] for w in monitor.waits] == ["network backoff"] * 5


def tavily_ok() -> LoopbackResponse:
    return json_response({"query": "q", "answer": None, "results": []})


def by_key(responses: dict[str, LoopbackResponse]) -> Script:
    def handle(request: LoopbackRequest) -> LoopbackResponse:
        return responses[request.headers.get("authorization", "").removeprefix("Bearer ")]

    return Script(handle)


def search(
    http: httpx.AsyncClient, server: LoopbackServer, keys: list[str], clock: FakeClock
) -> TavilySearch:
    settings = SearchSettings(_env_file=None, base_url=server.base_url)  # type: ignore[call-arg]
    return TavilySearch(
        http, settings, TavilyKeyPool([SecretStr(k) for k in keys], clock), clock, monitor=Recorder()
    )


def sent_keys(script: Script) -> list[str]:
    return [r.headers["authorization"].removeprefix("Bearer ") for r in script.requests]


async def test_a_key_over_its_plan_limit_is_retired_and_the_pool_serves_on(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    over = json_response(
        {"detail": {"error": "This request exceeds your plan's set usage limit."}}, status=432
    )
    script = by_key({KEY_A: over, KEY_B: tavily_ok()})
    with LoopbackServer(script) as server:
        tool = search(http, server, [KEY_A, KEY_B], clock)
        for _ in range(3):
            assert (await tool.search("q", CUTOFF, 5)).error_kind is None
            clock.advance(3600)  # a cooldown would have ended: a retired key stays retired
        await tool.aclose()
    assert sent_keys(script) == [KEY_A, KEY_B, KEY_B, KEY_B]
    assert clock.sleeps == []


async def test_a_pool_out_of_quota_stops_the_run_naming_the_pool(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = by_key(
        {
            KEY_A: json_response({"detail": {"error": "Plan limit reached."}}, status=432),
            KEY_B: json_response({"detail": {"error": "Pay-as-you-go limit reached."}}, status=433),
        }
    )
    with LoopbackServer(script) as server:
        tool = search(http, server, [KEY_A, KEY_B], clock)
        with pytest.raises(QuotaError) as info:
            await tool.search("q", CUTOFF, 5)
        await tool.aclose()
    assert len(script.requests) == 2 and clock.sleeps == []
    message = str(info.value)
    assert "2 of 2 key(s)" in message and info.value.channel == "search"
    assert "add a key" in info.value.remedy and KEY_A not in message and KEY_B not in message


async def test_a_cooldown_above_the_cap_stops(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(
        json_response({"detail": {"error": "Rate limit"}}, status=429, headers={"Retry-After": "900"})
    )
    with LoopbackServer(script) as server:
        tool = search(http, server, [KEY_A], clock)
        # The message names the reply's status (issue 28 §2: "asked to wait" alone hid the 429).
        with pytest.raises(ProviderUnavailableError, match="answered HTTP 429 and asked to wait 900 s"):
            await tool.search("q", CUTOFF, 5)
        await tool.aclose()
    assert clock.sleeps == []


async def test_detector_out_of_credit_stops_instead_of_failing_closed(http: httpx.AsyncClient) -> None:
    script = Script(QUOTA_429)
    result = SearchResult("t", "https://example.org", "c", None, "2025-01-01")
    with LoopbackServer(script) as server:
        llm = LLMSettings(_env_file=None, base_url=server.base_url + "/v1", api_key="sk-main-0123456789")  # type: ignore[call-arg]
        settings = DetectorSettings(_env_file=None, model="aux/detector")  # type: ignore[call-arg]
        detector = LeakDetector(http, settings, llm, FakeClock(), monitor=Recorder())
        with pytest.raises(QuotaError) as info:
            await detector.judge(result, CUTOFF)
    assert len(script.requests) == 1
    assert info.value.channel == "detector" and "LEAK_DETECTOR_API_KEY" in info.value.remedy
    assert json.loads(script.requests[0].body)["model"] == "aux/detector"
