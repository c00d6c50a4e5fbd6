"""The main-LLM client over real HTTP on loopback: request rules, barriers, retries (Tables 10, 14, 16)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from oracleproto.context import CallContext, call_context, current_logical_call
from oracleproto.errors import AuthError, BrowsingBarrierError, CallFailedError, ConfigError, ErrorKind
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.llm import OpenAIChatClient, derive_seed, is_reasoning_slug
from oracleproto.providers.tools import WEB_SEARCH_SCHEMA
from oracleproto.settings.model import LLMSettings
from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer
from oracleproto.transport.extensions import LATENCY_MS, RECORDED_AT
from tests.providers.payloads import all_interactions
from tests.providers.scripted import Script, chat_body, json_response

MESSAGES = [{"role": "user", "content": "Will it rain?"}]
KEY = "sk-test-0123456789abcdef"


def settings(**overrides: Any) -> LLMSettings:
    return LLMSettings(_env_file=None, **overrides)  # type: ignore[call-arg]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def make(
    http: httpx.AsyncClient, server: LoopbackServer, clock: FakeClock | None = None, **kw: Any
) -> OpenAIChatClient:
    return OpenAIChatClient(
        http, settings(**kw), clock or FakeClock(), base_url=server.base_url + "/v1", api_key=KEY
    )


# --- request body -----------------------------------------------------------------------------


async def test_default_request_body_and_headers(http: httpx.AsyncClient) -> None:
    script = Script(json_response(chat_body()))
    with LoopbackServer(script) as server:
        response = await make(http, server).complete("vendor/model-a", MESSAGES, [])
    assert response.content == "hi" and response.served_model == "served-model"
    request = script.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert json.loads(request.body) == {
        "model": "vendor/model-a",
        "messages": MESSAGES,
        "temperature": 0.7,
        "top_p": 1.0,
        "max_tokens": 12_000,
    }


async def test_tools_sent_only_when_non_empty(http: httpx.AsyncClient) -> None:
    script = Script(json_response(chat_body()))
    with LoopbackServer(script) as server:
        client = make(http, server)
        await client.complete("m", MESSAGES, [WEB_SEARCH_SCHEMA])
        await client.complete("m", MESSAGES, [])
    first, second = script.bodies()
    assert first["tools"] == [WEB_SEARCH_SCHEMA]
    assert "tools" not in second


@pytest.mark.parametrize(
    "slug", ["openai/o1-mini", "openai/O3", "o4-mini", "deepseek/DeepSeek-R1", "qwen/QwQ-32b"]
)
async def test_reasoning_slugs_omit_sampling_parameters(http: httpx.AsyncClient, slug: str) -> None:
    script = Script(json_response(chat_body()))
    with LoopbackServer(script) as server:
        await make(http, server).complete(slug, MESSAGES, [])
    body = script.bodies()[0]
    assert "temperature" not in body and "top_p" not in body


def test_reasoning_pattern_is_configurable() -> None:
    assert is_reasoning_slug("acme/thinker", ["think"])
    assert not is_reasoning_slug("openai/gpt-4o", ["o1", "o3", "o4", "r1", "qwq"])


async def test_max_completion_tokens_for_listed_slugs(http: httpx.AsyncClient) -> None:
    script = Script(json_response(chat_body()))
    with LoopbackServer(script) as server:
        client = make(http, server, max_completion_tokens_models=["openai/gpt-5"])
        await client.complete("openai/gpt-5", MESSAGES, [])
        await client.complete("openai/gpt-4o", MESSAGES, [])
    listed, other = script.bodies()
    assert listed["max_completion_tokens"] == 12_000 and "max_tokens" not in listed
    assert other["max_tokens"] == 12_000 and "max_completion_tokens" not in other


async def test_timeout_is_240_seconds() -> None:
    seen: list[Any] = []

    async def hook(request: httpx.Request) -> None:
        seen.append(request.extensions["timeout"])

    script = Script(json_response(chat_body()))
    async with httpx.AsyncClient(event_hooks={"request": [hook]}) as http:
        with LoopbackServer(script) as server:
            await make(http, server).complete("m", MESSAGES, [])
    assert seen == [{"connect": 240.0, "read": 240.0, "write": 240.0, "pool": 240.0}]


async def test_seed_only_when_enabled_and_derived_from_sample_identity(http: httpx.AsyncClient) -> None:
    script = Script(json_response(chat_body()))
    with LoopbackServer(script) as server:
        with call_context(CallContext("m::r5::c4", "q1", 2, 3)):
            await make(http, server).complete("m", MESSAGES, [])
            await make(http, server, send_seed=True).complete("m", MESSAGES, [])
        with call_context(CallContext("m::r5::c4", "q1", 1, 3)):
            await make(http, server, send_seed=True).complete("m", MESSAGES, [])
    off, on, other_sample = script.bodies()
    assert "seed" not in off
    assert on["seed"] == derive_seed("m::r5::c4", "q1", 2, 3)
    assert other_sample["seed"] != on["seed"]
    assert derive_seed("m", "q", 0, 0) == derive_seed("m", "q", 0, 0)


def test_missing_base_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="LLM_BASE_URL"):
        OpenAIChatClient(httpx.AsyncClient(), settings(), FakeClock())


# --- send-time barrier (Table 10) -------------------------------------------------------------

OTHER_TOOL = {"type": "function", "function": {"name": "browse", "parameters": {}}}


@pytest.mark.parametrize(
    ("model", "tools", "message"),
    [
        ("openai/gpt-4o:online", [], "':online'"),
        ("m", [WEB_SEARCH_SCHEMA, WEB_SEARCH_SCHEMA], "2 tools"),
        ("m", [OTHER_TOOL], "'browse'"),
    ],
)
async def test_barrier_rejects_before_sending(
    http: httpx.AsyncClient, model: str, tools: list[Any], message: str
) -> None:
    script = Script(json_response(chat_body()))
    with LoopbackServer(script) as server, pytest.raises(BrowsingBarrierError, match=message):
        await make(http, server).complete(model, MESSAGES, tools)
    assert script.requests == []


def test_barrier_rejects_plugins_field() -> None:
    from oracleproto.providers.barrier import assert_no_browsing

    with pytest.raises(BrowsingBarrierError, match="plugins"):
        assert_no_browsing({"model": "m", "messages": [], "plugins": [{"id": "web"}]})
    assert_no_browsing({"model": "m", "messages": [], "tools": [WEB_SEARCH_SCHEMA]})


# --- retries (Tables 14 and 16) ---------------------------------------------------------------

DROP = LoopbackResponse(drop_connection=True)


async def test_network_errors_walk_the_network_sequence(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(DROP)
    with LoopbackServer(script) as server, pytest.raises(CallFailedError) as info:
        await make(http, server, clock).complete("m", MESSAGES, [])
    assert info.value.kind is ErrorKind.NETWORK
    assert clock.sleeps == [2, 5, 15, 30, 60]
    assert len(script.requests) == 6
    assert "retries exhausted" in str(info.value)


async def test_rate_limit_walks_its_sequence(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(json_response({"error": {"code": 429}}, status=429))
    with LoopbackServer(script) as server, pytest.raises(CallFailedError) as info:
        await make(http, server, clock).complete("m", MESSAGES, [])
    assert info.value.kind is ErrorKind.RATE_LIMIT and info.value.status_code == 429
    assert clock.sleeps == [10, 30, 60, 120, 300]


async def test_server_errors_walk_the_5xx_sequence(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(json_response({"code": 502, "message": "Network connection lost."}, status=502))
    with LoopbackServer(script) as server, pytest.raises(CallFailedError) as info:
        await make(http, server, clock).complete("m", MESSAGES, [])
    assert info.value.kind is ErrorKind.SERVER_5XX
    assert clock.sleeps == [5, 15, 30, 60, 120]


async def test_retry_max_caps_the_attempts(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(json_response({}, status=500))
    with LoopbackServer(script) as server, pytest.raises(CallFailedError):
        await make(http, server, clock, retry_max=2).complete("m", MESSAGES, [])
    assert clock.sleeps == [5, 15] and len(script.requests) == 3


async def test_retry_after_seconds_and_http_date_are_honoured(http: httpx.AsyncClient) -> None:
    clock = FakeClock(datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC))
    later = format_datetime(datetime(2026, 3, 1, 12, 0, 42, tzinfo=UTC), usegmt=True)
    script = Script(
        json_response({"error": "slow down"}, status=429, headers={"Retry-After": "7"}),
        json_response({"error": "slow down"}, status=429, headers={"Retry-After": later}),
        json_response({"error": "slow down"}, status=429, headers={"Retry-After": "soon"}),
        json_response(chat_body("done")),
    )
    with LoopbackServer(script) as server:
        response = await make(http, server, clock).complete("m", MESSAGES, [])
    assert response.content == "done"
    # 7 s, then the date 42 s after now (the clock moved 7 s), then unusable → sequence entry 3
    assert clock.sleeps == [7.0, 35.0, 60.0]


async def test_each_kind_walks_its_own_sequence(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(
        DROP, json_response({}, status=429), json_response({}, status=503), DROP, json_response(chat_body())
    )
    with LoopbackServer(script) as server:
        await make(http, server, clock).complete("m", MESSAGES, [])
    assert clock.sleeps == [2, 10, 5, 5]


async def test_real_openrouter_429_sequence_then_success(
    http: httpx.AsyncClient, shared_payloads: Path
) -> None:
    recorded = [
        i for i in all_interactions(shared_payloads) if i.source.endswith("google_model@126710a5.yaml")
    ]
    assert [i.status for i in recorded] == [429, 429, 200]
    clock = FakeClock()
    script = Script(*(LoopbackResponse(status=i.status, body=i.body) for i in recorded))
    with LoopbackServer(script) as server:
        response = await make(http, server, clock).complete("google/gemini-2.0-flash-exp:free", MESSAGES, [])
    assert clock.sleeps == [10, 30]
    assert response.finish_reason == "stop" and response.content


async def test_attempt_counter_is_set_before_each_send() -> None:
    attempts: list[int] = []
    calls: set[int] = set()

    async def hook(request: httpx.Request) -> None:
        call = current_logical_call()
        assert call is not None
        attempts.append(call.attempt)
        calls.add(id(call))

    script = Script(json_response({}, status=500), json_response({}, status=500), json_response(chat_body()))
    async with httpx.AsyncClient(event_hooks={"request": [hook]}) as http:
        with LoopbackServer(script) as server:
            await make(http, server).complete("m", MESSAGES, [])
    assert attempts == [0, 1, 2]
    assert len(calls) == 1  # one logical call for all attempts


async def test_auth_raises_at_once_without_leaking_the_key(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    body = {"error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"}}
    script = Script(json_response(body, status=401))
    with LoopbackServer(script) as server, pytest.raises(AuthError) as info:
        await make(http, server, clock).complete("m", MESSAGES, [])
    assert clock.sleeps == [] and len(script.requests) == 1
    assert info.value.status_code == 401
    assert KEY not in str(info.value) and "sk-t…" in str(info.value)


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (400, {"error": {"code": "content_filter", "message": "filtered"}}, ErrorKind.CONTENT_POLICY),
        (400, {"error": {"code": "unsupported_value"}}, ErrorKind.BAD_REQUEST),
        # A 404 that does not speak of a model (a wrong path): Table 14's "anything else". A
        # model_not_found 404 stops the run instead (test_model_not_found.py).
        (404, {"error": {"message": "Not Found"}}, ErrorKind.UNKNOWN),
    ],
)
async def test_terminal_kinds_are_not_retried(
    http: httpx.AsyncClient, status: int, body: Any, kind: ErrorKind
) -> None:
    clock = FakeClock()
    script = Script(json_response(body, status=status))
    with LoopbackServer(script) as server, pytest.raises(CallFailedError) as info:
        await make(http, server, clock).complete("m", MESSAGES, [])
    assert type(info.value) is CallFailedError and info.value.kind is kind
    assert clock.sleeps == [] and len(script.requests) == 1


async def test_error_object_in_200_is_classified_and_retried(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(
        json_response({"error": {"code": 502, "message": "lost"}}), json_response(chat_body("ok"))
    )
    with LoopbackServer(script) as server:
        response = await make(http, server, clock).complete("m", MESSAGES, [])
    assert response.content == "ok" and clock.sleeps == [5]


async def test_non_json_200_is_unknown(http: httpx.AsyncClient) -> None:
    script = Script(LoopbackResponse(status=200, body=b"<html>oops</html>"))
    with LoopbackServer(script) as server, pytest.raises(CallFailedError, match="not JSON") as info:
        await make(http, server).complete("m", MESSAGES, [])
    assert info.value.kind is ErrorKind.UNKNOWN


# --- timing -----------------------------------------------------------------------------------


class _Stamping(httpx.AsyncHTTPTransport):
    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await super().handle_async_request(request)
        response.extensions = {
            **response.extensions,
            LATENCY_MS: 1234,
            RECORDED_AT: "2025-05-06T07:08:09+00:00",
        }
        return response


async def test_recorded_latency_and_timestamp_win() -> None:
    script = Script(json_response(chat_body()))
    async with httpx.AsyncClient(transport=_Stamping()) as http:
        with LoopbackServer(script) as server:
            response = await make(http, server).complete("m", MESSAGES, [])
    assert response.latency_ms == 1234
    assert response.received_at == datetime(2025, 5, 6, 7, 8, 9, tzinfo=UTC)


async def test_measured_latency_includes_backoff_on_the_clock(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(json_response({}, status=500), json_response(chat_body()))
    with LoopbackServer(script) as server:
        response = await make(http, server, clock).complete("m", MESSAGES, [])
    assert response.latency_ms == 5000
    assert response.received_at == clock.now()


# --- every real success over the wire ---------------------------------------------------------


async def test_every_real_success_through_the_client(http: httpx.AsyncClient, shared_payloads: Path) -> None:
    items = [
        i for i in all_interactions(shared_payloads) if i.is_chat and i.status == 200 and not i.is_streaming
    ]
    script = Script(*(LoopbackResponse(status=200, body=i.body) for i in items))
    with LoopbackServer(script) as server:
        client = make(http, server)
        for item in items:
            response = await client.complete("m", MESSAGES, [])
            raw = json.loads(item.body.decode().lstrip())
            assert response.response_id == raw.get("id"), item.source
            assert response.finish_reason == raw["choices"][0]["finish_reason"], item.source
    assert len(script.requests) == len(items)
