"""A provider without the configured model: a configuration error, not an outage (issue 28 §2).

``is_model_not_found`` recognises the real shapes (OpenAI, Groq, vLLM, Ollama, OpenRouter,
DeepSeek, Together, Anthropic) and leaves a 404 that is not about a model to Table 14's
``unknown`` (the circuit breaker judges a wrong base URL). Live, the main LLM and the detector
stop the run at the first one (``ModelNotFoundError``, exit 2) with the provider's words and the
slug; a replayed one keeps the outcome it was recorded with. ``model_check`` compares slugs with
``GET {base}/models`` before the first paid call.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from oracleproto.errors import CallFailedError, ErrorKind
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.classify import classify_status, is_model_not_found, is_model_not_found_object
from oracleproto.providers.detector import LeakDetector
from oracleproto.providers.llm import OpenAIChatClient
from oracleproto.providers.model_check import check_models, is_listed, listed_ids
from oracleproto.providers.model_not_found import ModelNotFoundError
from oracleproto.providers.types import SearchResult
from oracleproto.settings.model import (
    AnalysisSettings,
    DetectorSettings,
    LLMSettings,
    ReactSettings,
    RunSettings,
    SearchSettings,
    Settings,
)
from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.transport.extensions import FROM_CASSETTE
from tests.providers.scripted import Script, json_response

KEY = "sk-test-0123456789abcdef"
MESSAGES = [{"role": "user", "content": "hi"}]

#: (status, body) of real "no such model" replies.
MISSING = {
    "openai": (404, {"error": {"message": "The model `gpt-5.2-proo` does not exist or you do not have "
                               "access to it.", "type": "invalid_request_error", "param": None,
                               "code": "model_not_found"}}),
    "groq": (404, {"error": {"message": "The model `non-existent` does not exist or you do not have "
                             "access to it.", "type": "invalid_request_error", "code": "model_not_found"}}),
    "vllm": (404, {"object": "error", "message": "The model `llama-4` does not exist.",
                   "type": "NotFoundError", "param": None, "code": 404}),
    "ollama": (404, {"error": {"message": 'model "qwen9" not found, try pulling it first',
                               "type": "api_error"}}),
    "openrouter-404": (404, {"error": {"message": "No endpoints found for openai/gpt-9.", "code": 404}}),
    "openrouter-400": (400, {"error": {"message": "openai/gpt-9 is not a valid model ID", "code": 400}}),
    "deepseek": (400, {"error": {"message": "Model Not Exist", "type": "invalid_request_error"}}),
    "together": (404, {"error": {"message": "Unable to access model x/y.", "code": "model_not_available"}}),
    "anthropic": (404, {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-9"}}),
}  # fmt: skip
#: 404/400 replies that are not about a model.
OTHER = {
    "wrong path": (404, {"error": {"message": "Unknown request URL: POST /v2/chat/completions."}}),
    "starlette": (404, {"detail": "Not Found"}),
    "html": (404, "<html><body><h1>404 Not Found</h1></body></html>"),
    "bad field": (400, {"error": {"message": "Invalid value for 'temperature'", "code": "invalid_value"}}),
    "policy": (400, {"error": {"message": "filtered by the content filter", "code": "content_filter"}}),
}


def text(body: Any) -> str:
    return body if isinstance(body, str) else json.dumps(body)


@pytest.mark.parametrize("name", sorted(MISSING))
def test_real_no_such_model_replies_are_recognised(name: str) -> None:
    status, body = MISSING[name]
    assert is_model_not_found(status, text(body))
    # Table 14's kind is unchanged: a replay of an earlier recording writes the same error.
    assert classify_status(status, text(body)) in (ErrorKind.UNKNOWN, ErrorKind.BAD_REQUEST)


@pytest.mark.parametrize("name", sorted(OTHER))
def test_other_404s_and_400s_are_not(name: str) -> None:
    status, body = OTHER[name]
    assert not is_model_not_found(status, text(body))
    assert not is_model_not_found(500, text(MISSING["openai"][1]))


def test_error_objects_inside_a_200() -> None:
    assert is_model_not_found_object({"code": "model_not_found", "message": "no"})
    assert is_model_not_found_object({"code": 404, "message": "The model `x` does not exist"})
    assert not is_model_not_found_object({"code": 502, "message": "model overloaded"})
    assert not is_model_not_found_object("model_not_found")


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def chat(http: httpx.AsyncClient, base: str) -> OpenAIChatClient:
    settings = LLMSettings.from_values({})
    return OpenAIChatClient(http, settings, FakeClock(), base_url=base + "/v1", api_key=KEY)


async def test_a_live_404_stops_at_once_with_the_slug_and_the_words(http: httpx.AsyncClient) -> None:
    status, body = MISSING["openai"]
    echoed = {"error": {**body["error"], "message": body["error"]["message"] + f" (key {KEY})"}}
    script = Script(json_response(echoed, status=status))
    with LoopbackServer(script) as server, pytest.raises(ModelNotFoundError) as info:
        await chat(http, server.base_url).complete("gpt-5.2-proo", MESSAGES, [])
    error = info.value
    assert len(script.requests) == 1 and error.channel == "llm" and error.model == "gpt-5.2-proo"
    message = str(error)
    assert message.startswith("model not found: the llm provider at 127.0.0.1:")
    assert "has no model 'gpt-5.2-proo' (HTTP 404: The model `gpt-5.2-proo` does not exist" in message
    assert "correct MODELS" in message and KEY not in message


async def test_a_model_not_found_object_in_a_200_stops_too(http: httpx.AsyncClient) -> None:
    script = Script(json_response({"error": {"code": "model_not_found", "message": "No such model: x"}}))
    with LoopbackServer(script) as server, pytest.raises(ModelNotFoundError, match="No such model: x"):
        await chat(http, server.base_url).complete("x", MESSAGES, [])


class _Replayed(httpx.AsyncBaseTransport):
    """Answers like a cassette: the recorded 404, marked as served from the cassette."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        status, body = MISSING["openai"]
        return httpx.Response(status, json=body, extensions={FROM_CASSETTE: True}, request=request)


async def test_a_replayed_404_keeps_the_outcome_it_was_recorded_with() -> None:
    async with httpx.AsyncClient(transport=_Replayed()) as replay:
        with pytest.raises(CallFailedError) as info:
            await chat(replay, "http://127.0.0.1:9").complete("gpt-5.2-proo", MESSAGES, [])
    assert type(info.value) is CallFailedError and info.value.kind is ErrorKind.UNKNOWN


async def test_the_detector_stops_on_an_unknown_slug(http: httpx.AsyncClient) -> None:
    status, body = MISSING["groq"]
    script = Script(json_response(body, status=status))
    result = SearchResult("Title", "https://example.org/a", "Text.", None, "2026-03-01")
    with LoopbackServer(script) as server, pytest.raises(ModelNotFoundError) as info:
        llm = LLMSettings.from_values({"base_url": server.base_url + "/v1", "api_key": KEY})
        detector = LeakDetector(http, DetectorSettings.from_values({"model": "det/x"}), llm, FakeClock())
        await detector.judge(result, date(2026, 3, 10))
    assert info.value.channel == "detector" and "correct LEAK_DETECTOR_MODEL" in str(info.value)
    assert len(script.requests) == 1


# --- GET {base}/models -------------------------------------------------------------------------


def settings_for(base: str, models: list[str], detector: str = "sim/detector") -> Settings:
    llm = LLMSettings.from_values({"base_url": base + "/v1", "api_key": "sim-llm-key-0001", "models": models})
    return Settings(
        llm=llm,
        search=SearchSettings.from_values({}),
        detector=DetectorSettings.from_values({"model": detector, "api_key": SecretStr("sim-llm-key-0001")}),
        react=ReactSettings.from_values({}),
        run=RunSettings.from_values({}),
        analysis=AnalysisSettings.from_values({}),
    )


def test_listing_rules() -> None:
    assert listed_ids({"object": "list", "data": [{"id": "a"}, {"id": "b"}, {"x": 1}]}) == {"a", "b"}
    assert listed_ids({"data": [{"id": "a"}], "has_more": True}) is None  # a page of a longer list
    assert listed_ids({"data": []}) is None and listed_ids([{"id": "a"}]) is None
    assert is_listed("openai/gpt-4o:free", frozenset({"openai/gpt-4o"}))
    assert not is_listed("openai/gpt-4", frozenset({"openai/gpt-4o"}))


async def test_every_configured_slug_is_checked_against_the_list() -> None:
    with Simulator(SimConfig()) as sim:
        check = await check_models(settings_for(sim.base_url, ["sim/careful", "sim/hasti"], "sim/detectr"))
    assert [(slug, setting) for _, slug, setting in check.missing] == [
        ("sim/hasti", "MODELS"),
        ("sim/detectr", "LEAK_DETECTOR_MODEL"),
    ]
    assert check.notes() == []
    lines = "\n".join(check.lines())
    assert "MODELS sim/careful: listed at" in lines and "(did you mean 'sim/hasty'" in lines
    error = check.error()
    assert error is not None and "LEAK_DETECTOR_MODEL: 'sim/detectr' is not among the 7 models" in str(error)


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        (LoopbackResponse(status=404, body=b"{}"), "HTTP 404: the endpoint offers no model list"),
        (LoopbackResponse(status=405, body=b""), "HTTP 405: the endpoint offers no model list"),
        (LoopbackResponse(status=401, body=b"{}"), "HTTP 401"),
        (LoopbackResponse(status=200, body=b"<html>"), "HTTP 200 but not a complete OpenAI-style model list"),
        (LoopbackResponse(drop_connection=True), "RemoteProtocolError"),
    ],
)
async def test_what_cannot_be_checked_is_a_note_never_a_failure(reply: LoopbackResponse, why: str) -> None:
    with LoopbackServer(Script(reply)) as server:
        check = await check_models(settings_for(server.base_url, ["a/b"]))
    assert check.error() is None and check.missing == []
    [note] = check.notes()
    assert note.startswith(f"note: model slugs not checked at {server.base_url}/v1/models ({why}")
    assert note.endswith("); the first call will tell")
