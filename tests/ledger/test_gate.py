"""``LedgerGate`` on the in-process ledger: what a live call reserves, settles and waits for, how it
is refused at the cap (after its own calls in flight settled), what a lost ledger does before and
after a call, and which name a provider key gets (never the key); prices and ``LEDGER_*`` parsing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from oracleproto.analysis.prices import PriceTable, TokenPrice
from oracleproto.errors import ConfigError
from oracleproto.ledger import (
    Budget,
    CallPricing,
    LedgerGate,
    LedgerUnavailableError,
    MemoryLedger,
    Rate,
    credential_of,
    key_id,
    ledger_config,
)
from oracleproto.ledger.base import Grant
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.spend_cap import SpendCapError

KEY = "sk-test-ledger-key-000111"
PRICING = CallPricing(
    PriceTable({"m": TokenPrice(1.0, 2.0), "sim/detector": TokenPrice(0.1, 0.1)}, detector_usd_per_call=None),
    detector_model="sim/detector",
    usd_per_search=0.008,
)


def chat_request(model: str = "m", max_tokens: int = 100, key: str = KEY) -> httpx.Request:
    body = json.dumps(
        {"model": model, "max_tokens": max_tokens, "messages": [{"role": "user", "content": "hi"}]}
    )
    return httpx.Request(
        "POST",
        "http://x/v1/chat/completions",
        content=body.encode(),
        headers={"Authorization": f"Bearer {key}"},
    )


def reply(usage: dict[str, Any] | None, status: int = 200) -> Callable[[], Awaitable[httpx.Response]]:
    async def send() -> httpx.Response:
        body = {"choices": [], **({"usage": usage} if usage is not None else {})}
        return httpx.Response(status, json=body)

    return send


def gate(ledger: MemoryLedger, cap: int | None = None, **extra: Any) -> LedgerGate:
    ids = iter(range(10**6))
    return LedgerGate(
        ledger, budget="exp", cap_nano=cap, pricing=PRICING, new_id=lambda: f"r{next(ids)}", **extra
    )


async def test_a_call_reserves_its_bound_and_settles_its_reported_cost() -> None:
    ledger = MemoryLedger(FakeClock())
    request = chat_request(max_tokens=100)
    bound = PRICING.bound("llm", request.content)
    # The body's bytes as prompt tokens at $1/M plus 100 completion tokens at $2/M.
    assert bound == len(request.content) * 1000 + 100 * 2000
    the_gate = gate(ledger)
    response = await the_gate.around(
        "llm", request, reply({"prompt_tokens": 5, "completion_tokens": 3, "cost": 2e-6})
    )
    assert response.status_code == 200
    assert await ledger.budget("exp") == Budget(2000, 2000)  # OpenRouter's reported cost wins
    await the_gate.around("llm", chat_request(), reply({"prompt_tokens": 10, "completion_tokens": 5}))
    assert (await ledger.budget("exp")).settled_nano == 2000 + 10 * 1000 + 5 * 2000  # priced tokens
    await the_gate.around("llm", chat_request(), reply(None, status=429))  # no usage, failed: nothing
    await the_gate.around("search", httpx.Request("POST", "http://x/search", content=b"{}"), reply(None))
    assert the_gate.counts.calls == 4 and the_gate.counts.settled_nano == 22000 + 8_000_000
    assert "this process 4 paid call(s), $0.008022 settled" in the_gate.text()


async def test_at_the_cap_a_call_waits_for_its_own_calls_in_flight_then_is_refused() -> None:
    ledger = MemoryLedger(FakeClock())
    request = chat_request(max_tokens=100)
    bound = PRICING.bound("llm", request.content)
    assert bound is not None
    the_gate = gate(ledger, cap=bound + bound // 2)
    release = asyncio.Event()

    async def slow() -> httpx.Response:
        await release.wait()
        return httpx.Response(200, json={"usage": {"prompt_tokens": 1, "completion_tokens": 1}})

    first = asyncio.create_task(the_gate.around("llm", request, slow))
    await asyncio.sleep(0)
    second = asyncio.create_task(
        the_gate.around("llm", chat_request(), reply({"prompt_tokens": 1, "completion_tokens": 1}))
    )
    for _ in range(5):
        await asyncio.sleep(0)
    assert not second.done()  # refused while the first holds its bound: waiting for it to settle
    release.set()
    await asyncio.gather(first, second)
    assert (await ledger.budget("exp")).settled_nano == 2 * 3000
    # Nothing in flight and the bound does not fit: refused, saying what is committed.
    await ledger.reserve("exp", "another-shard", bound, None)
    with pytest.raises(SpendCapError) as refused:
        await the_gate.around("llm", chat_request(), reply({}))
    message = str(refused.value)
    assert message.startswith("spend cap: experiment exp: the ledger (memory) has $")
    assert (
        "committed by every shard (spent, or reserved by calls in flight), and this llm call may cost up to $"
        in (message)
    )
    assert (
        refused.value.remedy
        == "raise --max-cost on every shard (or leave it out) if the experiment should go on"
    )


async def test_failed_sends_settle_what_they_may_have_cost() -> None:
    ledger = MemoryLedger(FakeClock())
    the_gate = gate(ledger)
    request = chat_request()
    bound = PRICING.bound("llm", request.content)

    def failing(exc: Exception) -> Callable[[], Awaitable[httpx.Response]]:
        async def send() -> httpx.Response:
            raise exc

        return send

    with pytest.raises(httpx.ConnectError):  # nothing sent, nothing billed
        await the_gate.around("llm", request, failing(httpx.ConnectError("refused")))
    assert await ledger.budget("exp") == Budget(0, 0)
    with pytest.raises(httpx.ReadTimeout):  # sent: maybe billed, counted at its bound
        await the_gate.around("llm", request, failing(httpx.ReadTimeout("slow")))
    assert await ledger.budget("exp") == Budget(bound, bound)

    async def cancelled() -> httpx.Response:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):  # a stop: left open, counted at its bound
        await the_gate.around("llm", request, cancelled)
    assert await ledger.budget("exp") == Budget(2 * bound, bound)


class LosingLedger(MemoryLedger):
    """A ledger that answers until told to vanish."""

    lost = False

    async def reserve(self, budget: str, reservation: str, nano_usd: int, cap_nano: int | None) -> Grant:
        if self.lost:
            raise LedgerUnavailableError("memory (LEDGER_URL) did not answer (ConnectionError: gone)")
        return await super().reserve(budget, reservation, nano_usd, cap_nano)

    async def settle(self, budget: str, reservation: str, nano_usd: int) -> None:
        if self.lost:
            raise LedgerUnavailableError("memory (LEDGER_URL) did not answer (ConnectionError: gone)")
        await super().settle(budget, reservation, nano_usd)


async def test_a_ledger_lost_during_a_call_keeps_its_answer_and_stops_the_next_call() -> None:
    ledger = LosingLedger(FakeClock())
    the_gate = gate(ledger)

    async def answered_as_the_ledger_goes() -> httpx.Response:
        ledger.lost = True
        return httpx.Response(200, json={"usage": {"prompt_tokens": 1, "completion_tokens": 1}})

    response = await the_gate.around("llm", chat_request(), answered_as_the_ledger_goes)
    assert response.status_code == 200  # paid for: the cassette records it
    assert the_gate.counts.unsettled == 1
    sent: list[int] = []

    async def never() -> httpx.Response:
        sent.append(1)
        return httpx.Response(200)

    with pytest.raises(LedgerUnavailableError, match="did not answer"):
        await the_gate.around("llm", chat_request(), never)
    assert not sent  # no call is made that the shared count would not see
    assert "1 not settled (the ledger was lost; counted at their bound)" in the_gate.text()


async def test_a_key_with_a_rate_waits_for_its_tokens() -> None:
    clock = FakeClock()
    ledger = MemoryLedger(clock)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    the_gate = gate(ledger, rates={key_id(KEY): Rate(per_s=2.0, burst=1)}, sleep=sleep)
    for _ in range(3):
        await the_gate.around("llm", chat_request(), reply({"prompt_tokens": 1, "completion_tokens": 1}))
    assert slept == [0.5, 0.5]
    await the_gate.around("llm", chat_request(key="sk-unrated-key-99999999"), reply({}))
    assert len(slept) == 2  # a key without a rate is not throttled
    assert "1.0 s waited for rate tokens" in the_gate.text()


def test_keys_are_found_and_named_one_way() -> None:
    assert credential_of(chat_request()) == KEY
    assert credential_of(httpx.Request("POST", "http://x", headers={"x-api-key": "abc-key"})) == "abc-key"
    tavily = httpx.Request("POST", "http://x/search", content=json.dumps({"api_key": "tvly-123"}).encode())
    assert credential_of(tavily) == "tvly-123"
    assert credential_of(httpx.Request("POST", "http://x", content=b"not json")) is None
    name = key_id(KEY)
    assert len(name) == 32 and name == key_id(KEY) and name != key_id(KEY + "x")
    assert KEY[:8] not in name and KEY[-8:] not in name


def test_prices_bound_what_a_call_may_cost() -> None:
    body = json.dumps({"model": "unpriced", "max_tokens": 10}).encode()
    assert PRICING.bound("llm", body) is None
    assert PRICING.unpriced(["m", "unpriced", "sim/detector"], searches=True) == ["unpriced"]
    fallback = CallPricing(None, None, None, unpriced_usd=0.05)
    assert fallback.bound("llm", body) == 50_000_000 and fallback.bound("search", b"{}") == 50_000_000
    assert fallback.unpriced(["x"], searches=True) == []
    no_search = CallPricing(None, None, None)
    assert no_search.unpriced([], searches=True) == ["search (Tavily credits)"]
    # max_completion_tokens (reasoning models) bounds the completion as max_tokens does.
    reasoning = json.dumps({"model": "m", "max_completion_tokens": 7}).encode()
    assert PRICING.bound("llm", reasoning) == len(reasoning) * 1000 + 7 * 2000
    # xAI's ticks are its invoice; a reply that says nothing priceable counts its bound.
    assert (
        PRICING.cost("llm", reasoning, 200, json.dumps({"usage": {"cost_in_usd_ticks": 10**7}}).encode(), 9)
        == 10**6
    )
    assert PRICING.cost("llm", reasoning, 200, b"{}", 9) == 9
    assert PRICING.cost("search", b"{}", 432, b"{}", 9) == 0


@pytest.mark.parametrize(
    ("env", "said"),
    [
        ({"LEDGER_URL": "http://x"}, "LEDGER_URL: expected redis://HOST:PORT/DB"),
        ({"LEDGER_URL": "redis://x", "LEDGER_RATES": "llm=fast"}, "LEDGER_RATES: llm='fast' is not a rate"),
        ({"LEDGER_URL": "redis://x", "LEDGER_RATES": "gpu=1/s"}, "CHANNEL one of llm, search, detector"),
        ({"LEDGER_URL": "redis://x", "LEDGER_RATES": "llm=1/s:0"}, "the burst must be at least 1"),
        (
            {"LEDGER_URL": "redis://x", "LEDGER_RESERVE_USD": "-1"},
            "LEDGER_RESERVE_USD='-1': expected a number above 0",
        ),
        (
            {"LEDGER_URL": "redis://x", "LEDGER_TIMEOUT_S": "soon"},
            "LEDGER_TIMEOUT_S='soon': expected a number above 0",
        ),
    ],
)
def test_bad_ledger_settings_are_named(env: dict[str, str], said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ledger_config(env)
    assert said in str(caught.value)


def test_ledger_settings() -> None:
    assert ledger_config({}) is None and ledger_config({"LEDGER_URL": " "}) is None
    config = ledger_config({"LEDGER_URL": "redis://h:1/0", "LEDGER_RATES": "llm=600/min, search=5/s:10"})
    assert config is not None
    assert config.rates == {"llm": Rate(10.0, 10), "search": Rate(5.0, 10)}
    assert config.reserve_usd is None and config.timeout_s == 5.0
