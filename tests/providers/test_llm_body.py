"""The main-LLM body from a harness profile (§1, §2): key order, serialisation, up-front checks.

The built-in profile must write exactly what httpx's ``json=`` wrote before profiles existed
(compact separators, non-ASCII raw, keys in build order), so every recording replays unchanged.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from oracleproto.context import CallContext, call_context
from oracleproto.errors import ConfigError
from oracleproto.primitives.clock import FakeClock
from oracleproto.profile import builtin_profile
from oracleproto.providers.llm import OpenAIChatClient, build_chat_body
from oracleproto.providers.llm_body import check_llm_key_order, llm_body_keys
from oracleproto.providers.tools import WEB_SEARCH_SCHEMA
from oracleproto.settings.model import LLMSettings
from oracleproto.sim.loopback import LoopbackServer
from tests.providers.earlier import current_profile, earlier_profile
from tests.providers.scripted import Script, chat_body, json_response

#: Untrusted text with every awkward code point class: controls, quotes, U+2028, non-ASCII,
#: astral, and a lone surrogate (httpx's ``json=`` could not even encode that one).
HOSTILE = '\x00\x1f"\\/\u2028\u00e9\U0001f600\ud800 {{x}} %s \\boxed{A}'
MESSAGES = [{"role": "user", "content": "Will it rain? é"}]


def settings(**overrides: Any) -> LLMSettings:
    return LLMSettings(_env_file=None, **overrides)  # type: ignore[call-arg]


def legacy_body(
    llm: LLMSettings, model: str, messages: Any, tools: Any, seed: int | None = None
) -> dict[str, Any]:
    """The body as ``build_chat_body`` built it before profiles (its insertion order)."""
    body: dict[str, Any] = {"model": model, "messages": list(messages)}
    if tools:
        body["tools"] = list(tools)
    if "o1" not in model:
        body["temperature"] = llm.temperature
        body["top_p"] = llm.top_p
    key = "max_completion_tokens" if model in llm.max_completion_tokens_models else "max_tokens"
    body[key] = llm.max_tokens
    if seed is not None:
        body["seed"] = seed
    return body


def httpx_json_bytes(body: dict[str, Any]) -> bytes:
    """What ``httpx.AsyncClient.post(json=body)`` sent."""
    return httpx.Request("POST", "http://127.0.0.1/", json=body).content


@pytest.mark.parametrize(
    ("model", "tools", "overrides"),
    [
        ("vendor/model-a", [WEB_SEARCH_SCHEMA], {}),
        ("vendor/model-a", [], {"temperature": 0.0, "top_p": 0.95}),
        ("openai/o1-mini", [WEB_SEARCH_SCHEMA], {}),
        (
            "vendor/new",
            [WEB_SEARCH_SCHEMA],
            {"max_completion_tokens_models": ["vendor/new"], "send_seed": True},
        ),
    ],
)
def test_builtin_profile_writes_the_bytes_httpx_json_wrote(model: str, tools: Any, overrides: Any) -> None:
    llm = settings(**overrides)
    messages = [*MESSAGES, {"role": "assistant", "content": "é \U0001f600 \u2028"}]
    with call_context(CallContext(model, "q1", 2, 3)):
        body = build_chat_body(llm, model, messages, tools)
    seed = body.get("seed")
    assert (seed is not None) == llm.send_seed
    expected = httpx_json_bytes(legacy_body(llm, model, messages, tools, seed))
    assert builtin_profile().request_json.llm.encode(body) == expected
    # The fixture that writes oracleproto's behaviour down as a profile agrees, byte for byte.
    with call_context(CallContext(model, "q1", 2, 3)):
        written = build_chat_body(llm, model, messages, tools, current_profile())
    assert current_profile().request_json.llm.encode(written) == expected


def test_builtin_body_bytes_literal() -> None:
    body = build_chat_body(settings(), "m", MESSAGES, [])
    assert builtin_profile().request_json.llm.encode(body) == (
        b'{"model":"m","messages":[{"role":"user","content":"Will it rain? \xc3\xa9"}],'
        b'"temperature":0.7,"top_p":1.0,"max_tokens":12000}'
    )


def test_earlier_profile_orders_as_the_openai_sdk() -> None:
    profile = earlier_profile()
    body = build_chat_body(settings(), "m", MESSAGES, [profile.llm_request.tool_schema], profile)
    assert list(body) == ["model", "messages", "max_tokens", "temperature", "tools", "top_p"]
    body = build_chat_body(settings(max_completion_tokens_models=["m"]), "m", MESSAGES, [], profile)
    assert list(body) == ["model", "messages", "max_completion_tokens", "temperature", "top_p"]


def test_a_key_the_order_does_not_list_is_a_config_error_naming_key_and_profile() -> None:
    profile = earlier_profile()  # its order has no "seed"
    llm = settings(send_seed=True)
    with call_context(CallContext("m", "q1", 0, 0)), pytest.raises(ConfigError) as refused:
        build_chat_body(llm, "m", MESSAGES, [], profile)
    message = str(refused.value)
    assert "'earlier-harness'" in message and "llm_request.key_order" in message and "'seed'" in message
    # Without a sample identity no seed is sent, so nothing is out of order.
    assert "seed" not in build_chat_body(llm, "m", MESSAGES, [], profile)


def test_body_keys_follow_the_run_settings() -> None:
    assert llm_body_keys(settings(), "m") == (
        "model",
        "messages",
        "tools",
        "temperature",
        "top_p",
        "max_tokens",
    )
    assert llm_body_keys(settings(), "openai/o3", tools=False) == ("model", "messages", "max_tokens")
    custom = settings(max_completion_tokens_models=["m"], send_seed=True)
    assert llm_body_keys(custom, "m")[-2:] == ("max_completion_tokens", "seed")


def test_check_llm_key_order_refuses_before_any_call() -> None:
    check_llm_key_order(builtin_profile(), settings(send_seed=True, models=["a", "openai/o1"]))
    check_llm_key_order(earlier_profile(), settings(models=["a", "openai/o1"]))
    with pytest.raises(ConfigError, match=r"does not list 'seed', which this run sends to 'b'"):
        check_llm_key_order(earlier_profile(), settings(send_seed=True), ["b"])
    narrow = dataclasses.replace(
        builtin_profile(),
        name="narrow",
        llm_request=dataclasses.replace(
            builtin_profile().llm_request, key_order=("model", "messages", "max_tokens")
        ),
    )
    check_llm_key_order(narrow, settings(models=["openai/o1"]), tools=False)
    with pytest.raises(ConfigError) as refused:
        check_llm_key_order(narrow, settings(models=["plain"]), tools=True)
    assert str(refused.value) == (
        "harness profile 'narrow': llm_request.key_order does not list 'tools', 'temperature', 'top_p', "
        "which this run sends to 'plain'; add the keys to llm_request.key_order at the place the "
        "harness writes them"
    )


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.mark.parametrize("which", ["builtin", "earlier"])
async def test_the_client_posts_the_profile_bytes(http: httpx.AsyncClient, which: str) -> None:
    profile = builtin_profile() if which == "builtin" else earlier_profile()
    script = Script(json_response(chat_body()))
    messages = [{"role": "user", "content": HOSTILE}]
    tools = [profile.llm_request.tool_schema]
    with LoopbackServer(script) as server:
        kwargs = {} if which == "builtin" else {"profile": profile}
        client = OpenAIChatClient(
            http, settings(), FakeClock(), base_url=server.base_url, api_key="sk-fake-0001", **kwargs
        )
        assert client.profile is profile
        await client.complete("m", messages, tools)
    request = script.requests[0]
    assert request.headers["content-type"] == "application/json"
    assert request.body == profile.request_json.llm.encode(
        build_chat_body(settings(), "m", messages, tools, profile)
    )
    assert json.loads(request.body)["messages"][0]["content"] == HOSTILE
    # The lone surrogate travels as its escape, everything else of the text as raw UTF-8.
    assert b"\\ud800" in request.body and "\U0001f600".encode() in request.body
