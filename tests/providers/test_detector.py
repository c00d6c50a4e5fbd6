"""The leak detector: prompt constraints, verdict parser (Algorithm 4), failure policy (Table 13)."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracleproto import parse_verdict
from oracleproto.context import current_logical_call
from oracleproto.errors import AuthError, BrowsingBarrierError, ConfigError
from oracleproto.primitives.clock import FakeClock
from oracleproto.primitives.hashing import sha256_16
from oracleproto.providers.barrier import assert_detector_safe
from oracleproto.providers.detector import (
    LeakDetector,
    detector_prompt_hash,
    render_detector_prompt,
)
from oracleproto.providers.detector_template import DETECTOR_TEMPLATE
from oracleproto.providers.types import SearchResult
from oracleproto.settings.model import DetectorSettings, LLMSettings
from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer
from tests.providers.scripted import Script, chat_body, json_response

CUTOFF = date(2025, 3, 14)
RESULT = SearchResult(
    title="Launch schedule",
    url="https://example.org/launch",
    content="The launch is scheduled for 2025-08-15.",
    raw_content="Full page text.",
    published_date="2025-02-01",
    score=0.987654,
)


def verdict_reply(verdict: str = "keep", reason: str = "ok") -> LoopbackResponse:
    return json_response(chat_body(json.dumps({"verdict": verdict, "reason": reason})))


def detector_settings(**kw: Any) -> DetectorSettings:
    kw.setdefault("model", "aux/detector")
    return DetectorSettings(_env_file=None, **kw)  # type: ignore[call-arg]


def llm_settings(**kw: Any) -> LLMSettings:
    return LLMSettings(_env_file=None, **kw)  # type: ignore[call-arg]


def make(
    http: httpx.AsyncClient, server: LoopbackServer, clock: FakeClock | None = None, **kw: Any
) -> LeakDetector:
    llm = llm_settings(base_url=server.base_url + "/v1", api_key="sk-main-0123456789")
    return LeakDetector(http, detector_settings(**kw), llm, clock or FakeClock())


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


# --- prompt -----------------------------------------------------------------------------------


def test_prompt_never_uses_the_forbidden_words() -> None:
    for word in ("question", "answer", "option"):
        assert word not in DETECTOR_TEMPLATE.lower(), word
        assert word not in render_detector_prompt(RESULT, CUTOFF).lower(), word


def test_prompt_states_the_constraints() -> None:
    prompt = render_detector_prompt(RESULT, CUTOFF)
    assert prompt.count("2025-03-14") >= 2  # the cutoff in ISO form
    lowered = prompt.lower()
    assert "scheduled" in lowered and "speculated" in lowered  # future events are leakage
    assert 'when in doubt, the verdict is "drop"' in lowered
    assert "do not use outside knowledge" in lowered
    assert "single line of json" in lowered
    assert '{"verdict": "keep" or "drop", "reason":' in prompt


def test_prompt_carries_exactly_the_whitelisted_fields() -> None:
    prompt = render_detector_prompt(RESULT, CUTOFF)
    fields = re.findall(r"^(\w+): ", prompt.split("Page:\n", 1)[1], flags=re.MULTILINE)
    assert fields == ["title", "url", "published_date", "content", "raw_content"]
    for value in (RESULT.title, RESULT.url, RESULT.content, RESULT.raw_content, RESULT.published_date):
        assert value is not None and value in prompt
    assert "0.987654" not in prompt  # the score is not whitelisted


def test_prompt_with_missing_fields_and_braces_in_text() -> None:
    result = SearchResult(title="{x}", url="u", content="{verdict}", raw_content=None, published_date=None)
    prompt = render_detector_prompt(result, CUTOFF)
    assert "content: {verdict}" in prompt and "published_date: (not given)" in prompt


def test_prompt_hash_is_sha256_16_of_the_unformatted_template() -> None:
    # The built-in template keeps the value it had as a str.format template
    # (docs/design/datasets-and-providers.md, "Detector prompt as data"): sha256-16 of that spelling,
    # so earlier runs resume and snapshots keep their value.
    legacy = DETECTOR_TEMPLATE.replace("{", "{{").replace("}", "}}")
    for field in ("cutoff_date", "title", "url", "published_date", "content", "raw_content"):
        legacy = legacy.replace("{{{{" + field + "}}}}", "{" + field + "}")
    assert detector_prompt_hash() == sha256_16(legacy)
    assert re.fullmatch(r"[0-9a-f]{16}", detector_prompt_hash())
    # Pinned: a template change must be deliberate (it changes the config snapshot).
    assert detector_prompt_hash() == "e5ec48d2ffbe0c46"


# --- parse_verdict (Algorithm 4) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"verdict": "keep", "reason": "old news"}', ("keep", "old news")),
        ('  {"verdict": "drop", "reason": "post-cutoff"}\n', ("drop", "post-cutoff")),
        ('Sure. {"verdict": "drop", "reason": "x"} Done.', ("drop", "x")),
        ('```json\n{"verdict": "keep"}\n```', ("keep", "")),
        ('{"verdict": "keep", "reason": null}', ("keep", "")),
        ('{"verdict": "drop", "reason": 42}', ("drop", "42")),
        ('{"verdict": "drop", "reason": {"a": 1}}', ("drop", "{'a': 1}")),
        ('{"verdict": "keep", "reason": "a } b"}', ("keep", "a } b")),  # whole-body candidate
        ('{"verdict": "keep"} and then {"verdict": "drop"}', ("keep", "")),  # embedded, first object
        ('note: {"verdict": "keep", "reason": "a } b"}', None),  # naive brace scan cuts the string
        ('{"verdict": "maybe", "reason": "x"}', None),
        ('{"verdict": "KEEP"}', None),
        ('{"reason": "no verdict"}', None),
        ('["keep"]', None),
        ("keep", None),
        ("", None),
        ("   ", None),
        ("{not json}", None),
        ('{bad} {"verdict": "keep"}', None),  # the first balanced object is the candidate
        ('{"verdict": "keep"', None),
    ],
)
def test_parse_verdict(text: str, expected: tuple[str, str] | None) -> None:
    assert parse_verdict(text) == expected


@given(st.text())
def test_parse_verdict_never_raises(text: str) -> None:
    result = parse_verdict(text)
    assert result is None or result[0] in {"keep", "drop"}


def test_parse_verdict_deep_nesting_does_not_raise() -> None:
    assert parse_verdict("{" * 5000 + "}" * 5000) is None
    assert parse_verdict('{"verdict": "keep", "reason": ' + "[" * 100000 + "]" * 100000 + "}") is None


# --- request ----------------------------------------------------------------------------------


async def test_request_parameters_and_fallbacks() -> None:
    timeouts: list[Any] = []

    async def hook(request: httpx.Request) -> None:
        timeouts.append(request.extensions["timeout"]["read"])

    script = Script(verdict_reply("drop", "scheduled after cutoff"))
    async with httpx.AsyncClient(event_hooks={"request": [hook]}) as http:
        with LoopbackServer(script) as server:
            verdict = await make(http, server).judge(RESULT, CUTOFF)
    assert (verdict.label, verdict.reason, verdict.error_kind) == ("drop", "scheduled after cutoff", None)
    request = script.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-main-0123456789"  # falls back to LLM_API_KEY
    body = json.loads(request.body)
    assert set(body) == {"model", "messages", "temperature", "max_tokens"}
    assert body["model"] == "aux/detector" and body["temperature"] == 0.0 and body["max_tokens"] == 512
    assert body["messages"] == [{"role": "user", "content": render_detector_prompt(RESULT, CUTOFF)}]
    assert timeouts == [60.0]


async def test_own_base_url_and_key_win(http: httpx.AsyncClient) -> None:
    script = Script(verdict_reply())
    with LoopbackServer(script) as server:
        llm = llm_settings(base_url="http://127.0.0.1:9/unused", api_key="sk-main-0123456789")
        settings = detector_settings(base_url=server.base_url + "/aux", api_key="sk-aux-0123456789")
        await LeakDetector(http, settings, llm, FakeClock()).judge(RESULT, CUTOFF)
    assert script.requests[0].path == "/aux/chat/completions"
    assert script.requests[0].headers["authorization"] == "Bearer sk-aux-0123456789"


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="LEAK_DETECTOR_MODEL"):
        LeakDetector(
            httpx.AsyncClient(), detector_settings(model=None), llm_settings(base_url="http://x"), FakeClock()
        )
    with pytest.raises(ConfigError, match="LLM_BASE_URL"):
        LeakDetector(httpx.AsyncClient(), detector_settings(), llm_settings(), FakeClock())


async def test_online_detector_slug_is_refused_at_send_time(http: httpx.AsyncClient) -> None:
    script = Script(verdict_reply())
    with LoopbackServer(script) as server:
        detector = make(http, server, model="aux/detector:online")
        with pytest.raises(BrowsingBarrierError, match=":online"):
            await detector.judge(RESULT, CUTOFF)
    assert script.requests == []


@pytest.mark.parametrize("field", ["tools", "plugins", "tool_choice"])
def test_detector_barrier_rejects_tool_fields(field: str) -> None:
    with pytest.raises(BrowsingBarrierError, match=field):
        assert_detector_safe({"model": "m", "messages": [], field: []})
    assert_detector_safe({"model": "m", "messages": []})


# --- failure policy (Table 13) ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [(400, "bad_request"), (404, "unknown"), (429, "rate_limit")],
)
async def test_4xx_fails_at_once(http: httpx.AsyncClient, status: int, kind: str) -> None:
    clock = FakeClock()
    script = Script(json_response({"error": {"message": "no"}}, status=status))
    with LoopbackServer(script) as server:
        verdict = await make(http, server, clock).judge(RESULT, CUTOFF)
    assert (verdict.label, verdict.error_kind) == (f"failed:{kind}", kind)
    assert verdict.failed and len(script.requests) == 1 and clock.sleeps == []


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        (json_response({}, status=503), "server_5xx"),
        (LoopbackResponse(drop_connection=True), "network"),
        (LoopbackResponse(status=200, body=b"<html>busy</html>"), "parse"),
        (json_response(chat_body("I think it is fine.")), "parse"),
        (json_response(chat_body('{"verdict": "unsure"}')), "parse"),
        (json_response({"error": {"code": 502, "message": "lost"}}), "server_5xx"),
    ],
)
async def test_transient_failures_retry_then_fail_closed(
    http: httpx.AsyncClient, failure: LoopbackResponse, kind: str
) -> None:
    clock = FakeClock()
    script = Script(failure)
    with LoopbackServer(script) as server:
        verdict = await make(http, server, clock).judge(RESULT, CUTOFF)
    assert verdict.label == f"failed:{kind}" and verdict.error_kind == kind
    assert clock.sleeps == [2, 5, 15] and len(script.requests) == 4


async def test_timeout_is_a_retried_network_failure(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(LoopbackResponse(body=b"{}", delay_s=1.0))
    with LoopbackServer(script) as server:
        verdict = await make(http, server, clock, timeout_s=0.1, retry_max=1).judge(RESULT, CUTOFF)
    assert verdict.label == "failed:network" and clock.sleeps == [2]


async def test_error_object_with_a_4xx_code_is_not_retried(http: httpx.AsyncClient) -> None:
    clock = FakeClock()
    script = Script(json_response({"error": {"code": 400, "message": "bad field"}}))
    with LoopbackServer(script) as server:
        verdict = await make(http, server, clock).judge(RESULT, CUTOFF)
    assert verdict.label == "failed:bad_request" and clock.sleeps == [] and len(script.requests) == 1


@pytest.mark.parametrize(
    "reply",
    [
        json_response({"error": {"message": "Incorrect API key provided: sk-…"}}, status=401),
        json_response({"error": {"message": "Forbidden"}}, status=403),
        json_response({"error": {"code": 401, "message": "bad key"}}),
    ],
)
async def test_a_rejected_key_stops_the_run_at_once(http: httpx.AsyncClient, reply: LoopbackResponse) -> None:
    # Issue 28: a revoked detector key fail-closed every result of a "finished" run; now it is an
    # AuthError (exit 3, resumable) on the first reply, with no retry and no wait.
    clock = FakeClock()
    script = Script(reply)
    with LoopbackServer(script) as server, pytest.raises(AuthError) as info:
        await make(http, server, clock).judge(RESULT, CUTOFF)
    assert info.value.channel == "detector" and "LEAK_DETECTOR_API_KEY" in info.value.remedy
    assert "leak detector" in str(info.value) and len(script.requests) == 1 and clock.sleeps == []


async def test_recovery_within_the_budget_in_one_logical_call() -> None:
    attempts: list[int] = []

    async def hook(request: httpx.Request) -> None:
        call = current_logical_call()
        assert call is not None
        attempts.append(call.attempt)

    clock = FakeClock()
    script = Script(json_response(chat_body("hmm")), json_response({}, status=500), verdict_reply("keep"))
    async with httpx.AsyncClient(event_hooks={"request": [hook]}) as http:
        with LoopbackServer(script) as server:
            verdict = await make(http, server, clock).judge(RESULT, CUTOFF)
    assert verdict.label == "keep" and clock.sleeps == [2, 5] and attempts == [0, 1, 2]
