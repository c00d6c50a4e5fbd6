"""Provider-reported cost and cached tokens: real OpenRouter and DeepSeek shapes, xAI ticks, BYOK,
and the usage of a call that ended in an error (it was billed)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from oracleproto.errors import CallFailedError, ErrorKind
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.billing import BilledCallFailedError, cached_prompt_tokens, provider_cost_usd
from oracleproto.providers.chat_parse import body_usage, parse_chat_completion, parse_usage
from oracleproto.providers.detector import LeakDetector
from oracleproto.providers.filtered import FilteredSearch
from oracleproto.providers.llm import OpenAIChatClient
from oracleproto.providers.types import SearchOutcome, SearchResult, Usage
from oracleproto.settings.model import DetectorSettings, LLMSettings
from oracleproto.sim.loopback import LoopbackServer
from tests.providers.payloads import all_interactions
from tests.providers.scripted import Script, chat_body, json_response

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _body(root: Path, source: str, index: int) -> bytes:
    for item in all_interactions(root):
        if item.source == source and item.index == index:
            return item.body
    raise AssertionError(f"{source}#{index} is not among the real payloads")


def _sse_usages(root: Path, source: str) -> list[dict[str, Any]]:
    """The ``usage`` objects of a streamed cassette's chat replies (OpenRouter sends one last)."""
    found = []
    for item in all_interactions(root):
        if item.source == source and item.is_chat and item.is_streaming:
            lines = item.body.decode().splitlines()
            chunks = [json.loads(line[6:]) for line in lines if line.startswith("data: {")]
            found += [c["usage"] for c in chunks if c.get("usage")]
    return found


def test_real_openrouter_usage_with_cost_and_cached_tokens(shared_payloads: Path) -> None:
    body = _body(shared_payloads, "pydantic-ai/test_openrouter_usage.yaml", 1)
    raw = json.loads(body)["usage"]
    usage = parse_chat_completion(body, latency_ms=1, received_at=WHEN).usage
    assert usage.cost_usd == raw["cost"] and usage.cost_usd > 0
    assert usage.cached_tokens == raw["prompt_tokens_details"]["cached_tokens"] == 0
    assert (usage.prompt_tokens, usage.completion_tokens, usage.reasoning_tokens) == (
        raw["prompt_tokens"],
        raw["completion_tokens"],
        raw["completion_tokens_details"]["reasoning_tokens"],
    )


@pytest.mark.parametrize(
    "source", ["llm-openrouter/test_prompt@603cd08c.yaml", "llm-openrouter/test_tool_calls@603cd08c.yaml"]
)
def test_real_openrouter_stream_usage_chunk(shared_payloads: Path, source: str) -> None:
    raws = _sse_usages(shared_payloads, source)
    assert raws
    for raw in raws:
        usage = parse_usage(raw)
        assert raw["is_byok"] is False
        assert usage.cost_usd == raw["cost"] and usage.cost_usd > 0
        assert usage.cached_tokens == 0 and usage.prompt_tokens == raw["prompt_tokens"]


def test_real_deepseek_cache_hits(shared_payloads: Path) -> None:
    body = _body(shared_payloads, "pydantic-ai/test_deepseek_deferred_capability_with_thinking.yaml", 0)
    raw = json.loads(body)["usage"]
    assert raw["prompt_cache_hit_tokens"] > 0
    assert (
        parse_chat_completion(body, latency_ms=1, received_at=WHEN).usage.cached_tokens
        == raw["prompt_cache_hit_tokens"]
    )
    # DeepSeek's own field alone (its API without the OpenAI-style details) gives the same count.
    only_deepseek = {k: v for k, v in raw.items() if k != "prompt_tokens_details"}
    assert cached_prompt_tokens(only_deepseek) == raw["prompt_cache_hit_tokens"]
    # No provider cost in DeepSeek's usage: unknown, not zero.
    assert provider_cost_usd(raw) is None


def test_xai_ticks_are_exact_and_win_over_a_float_cost() -> None:
    # xAI's shape: an integer number of 1e-10 USD ticks (a proxy may add a float ``cost`` too).
    usage = {"prompt_tokens": 198, "completion_tokens": 90, "cost_in_usd_ticks": 2_709_000}
    assert provider_cost_usd(usage) == pytest.approx(0.0002709)
    assert provider_cost_usd({**usage, "cost": 0.5}) == pytest.approx(0.0002709)
    assert parse_usage({**usage, "prompt_tokens_details": {"cached_tokens": 192}}) == Usage(
        prompt_tokens=198, completion_tokens=90, cost_usd=pytest.approx(0.0002709), cached_tokens=192
    )


def test_byok_adds_the_upstream_charge_and_junk_is_unknown() -> None:
    byok = {"cost": 0.0001, "is_byok": True, "cost_details": {"upstream_inference_cost": 0.002}}
    assert provider_cost_usd(byok) == pytest.approx(0.0021)
    # Without is_byok the upstream figure repeats the charge (OpenRouter fills it on every call).
    assert provider_cost_usd({**byok, "is_byok": False}) == pytest.approx(0.0001)
    for junk in (
        {"cost": "0.1"},
        {"cost": -1},
        {"cost": True},
        {"cost": float("nan")},
        {"cost_in_usd_ticks": 1.5},
    ):
        assert provider_cost_usd(junk) is None, junk
    assert cached_prompt_tokens({"prompt_tokens_details": {"cached_tokens": -3}}) is None


def test_body_usage_of_error_replies() -> None:
    # OpenRouter's error object next to a usage object (the shape its mid-stream errors have).
    body = {
        "error": {"code": 400, "message": "Token limit reached"},
        "usage": {"prompt_tokens": 43, "completion_tokens": 10, "cost": 0},
    }
    assert body_usage(json.dumps(body)) == Usage(prompt_tokens=43, completion_tokens=10, cost_usd=0.0)
    assert body_usage(json.dumps({"error": {"message": "no"}})) is None
    assert body_usage(b"<html>502</html>") is None
    assert body_usage(b"[1, 2]") is None


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def _client(http: httpx.AsyncClient, server: LoopbackServer) -> OpenAIChatClient:
    settings = LLMSettings.from_values({"retry_max": 0})
    return OpenAIChatClient(
        http, settings, FakeClock(), base_url=server.base_url + "/v1", api_key="sk-test-0123456789"
    )


async def test_a_billed_failure_carries_its_usage(http: httpx.AsyncClient) -> None:
    failed = {
        "error": {"code": 400, "message": "Token limit reached"},
        "usage": {"prompt_tokens": 43, "completion_tokens": 10, "cost": 0.0007},
    }
    with (
        LoopbackServer(Script(json_response(failed))) as server,
        pytest.raises(BilledCallFailedError) as info,
    ):
        await _client(http, server).complete("vendor/m", [{"role": "user", "content": "q"}], [])
    assert info.value.kind is ErrorKind.BAD_REQUEST
    assert info.value.usage == Usage(prompt_tokens=43, completion_tokens=10, cost_usd=0.0007)


async def test_an_unbilled_failure_is_a_plain_call_failure(http: httpx.AsyncClient) -> None:
    reply = json_response({"error": {"message": "down"}}, status=503)
    with LoopbackServer(Script(reply)) as server, pytest.raises(CallFailedError) as info:
        await _client(http, server).complete("vendor/m", [{"role": "user", "content": "q"}], [])
    assert not isinstance(info.value, BilledCallFailedError)


async def test_success_keeps_cost_and_cache(http: httpx.AsyncClient) -> None:
    usage = {
        "prompt_tokens": 2000,
        "completion_tokens": 5,
        "prompt_tokens_details": {"cached_tokens": 1920},
        "cost": 0.00042,
    }
    with LoopbackServer(Script(json_response(chat_body(usage=usage)))) as server:
        response = await _client(http, server).complete("vendor/m", [{"role": "user", "content": "q"}], [])
    assert (response.usage.cost_usd, response.usage.cached_tokens) == (0.00042, 1920)


# --- the detector: every raw result's billed call, next to its verdict ----------------------------

RESULTS = tuple(
    SearchResult(
        title=f"page {i}", url=f"https://x.example/{i}", content="text", raw_content=None, published_date=None
    )
    for i in range(3)
)


def _detector(http: httpx.AsyncClient, server: LoopbackServer) -> LeakDetector:
    settings = DetectorSettings.from_values({"model": "aux/detector", "retry_max": 0})
    llm = LLMSettings.from_values({"base_url": server.base_url + "/v1"})
    return LeakDetector(http, settings, llm, FakeClock())


class _Search:
    async def search(self, query: str, end_date: date, max_results: int) -> SearchOutcome:
        dates = (None,) * len(RESULTS)
        return SearchOutcome(query, end_date, RESULTS, None, dates, None, None, 5)


async def test_detector_usage_rides_on_the_search_record(http: httpx.AsyncClient) -> None:
    keep = chat_body(
        '{"verdict": "keep", "reason": "old"}',
        usage={"prompt_tokens": 300, "completion_tokens": 9, "cost": 0.00003},
    )
    junk = chat_body("no json here", usage={"prompt_tokens": 310, "completion_tokens": 4})
    bare = chat_body('{"verdict": "drop", "reason": "new"}')
    del bare["usage"]
    replies = {"page 0": keep, "page 1": junk, "page 2": bare}

    def answer(request: Any) -> Any:
        prompt = json.loads(request.body)["messages"][0]["content"]
        return json_response(next(body for title, body in replies.items() if title in prompt))

    with LoopbackServer(Script(answer)) as server:
        outcome = await FilteredSearch(_Search(), _detector(http, server)).search("q", date(2025, 1, 1), 3)
    record = outcome.to_record()
    assert record["detector_verdicts"] == ["keep", "failed:parse", "drop"]
    # A reply without a verdict was billed all the same; a reply without usage reports nothing.
    assert record["detector_usage"] == [
        {"prompt": 300, "completion": 9, "reasoning": None, "cached": None, "cost_usd": 0.00003},
        {"prompt": 310, "completion": 4, "reasoning": None, "cached": None, "cost_usd": None},
        None,
    ]
