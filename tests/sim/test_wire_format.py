"""The simulator speaks the real wire formats: field sets compared with recorded payloads."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from tavily import AsyncTavilyClient
from tavily.errors import InvalidAPIKeyError

from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.server import SimConfig, Simulator

pytestmark = pytest.mark.shared


def _parsed_bodies(path: Path) -> list[dict[str, Any]]:
    data = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    return [
        i["response"]["parsed_body"] for i in data["interactions"] if i["response"]["status"]["code"] == 200
    ]


def _vcr_error_body(path: Path, status: int) -> dict[str, Any]:
    data = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
    for interaction in data["interactions"]:
        if interaction["response"]["status"]["code"] == status:
            body: dict[str, Any] = json.loads(interaction["response"]["body"]["string"])
            return body
    raise AssertionError(f"no {status} in {path}")


def _shape(value: Any) -> Any:
    """Nested key structure of a JSON value (lists by their first element)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__ if value is not None else None


async def test_tool_call_completion_has_the_real_openai_fields(
    sim: Simulator,
    shared_payloads: Path,
    render: Callable[..., str],
    chat_body: Callable[..., dict[str, Any]],
) -> None:
    real = _parsed_bodies(shared_payloads / "pydantic-ai" / "test_openai_tool_output.yaml")[0]
    prompt = render("Will the fictional Lake Vessa ferry resume service?", "yes_no")
    async with httpx.AsyncClient(headers={"Authorization": "Bearer sk-sim"}) as client:
        response = await client.post(
            sim.llm_base_url + "/chat/completions",
            json=chat_body("sim/greedy", [{"role": "user", "content": prompt}]),
        )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    ours = response.json()
    assert set(ours) == set(real)
    assert set(ours["choices"][0]) == set(real["choices"][0])
    assert set(ours["choices"][0]["message"]) == set(real["choices"][0]["message"])
    assert _shape(ours["choices"][0]["message"]["tool_calls"]) == _shape(
        real["choices"][0]["message"]["tool_calls"]
    )
    assert set(ours["usage"]) >= set(real["usage"])
    assert set(ours["usage"]["completion_tokens_details"]) == set(real["usage"]["completion_tokens_details"])
    assert ours["object"] == "chat.completion" and ours["choices"][0]["finish_reason"] == "tool_calls"
    assert ours["id"].startswith("chatcmpl-") and ours["system_fingerprint"].startswith("fp_")
    assert ours["service_tier"] == "default"
    call = ours["choices"][0]["message"]["tool_calls"][0]
    assert call["id"].startswith("call_") and json.loads(call["function"]["arguments"])["query"]
    usage = ours["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


async def test_content_completion_matches_a_real_stop_response(
    sim: Simulator,
    shared_payloads: Path,
    render: Callable[..., str],
    chat_body: Callable[..., dict[str, Any]],
) -> None:
    real = _parsed_bodies(shared_payloads / "pydantic-ai" / "test_max_completion_tokens[o3-mini].yaml")[0]
    prompt = render("Will the fictional Lake Vessa ferry resume service?", "yes_no")
    async with httpx.AsyncClient(headers={"Authorization": "Bearer sk-sim"}) as client:
        response = await client.post(
            sim.llm_base_url + "/chat/completions",
            # A persona whose gateway reports no cost sends OpenAI's usage shape exactly.
            json=chat_body("sim/oracle", [{"role": "user", "content": prompt}], tools=False),
        )
    ours = response.json()
    assert _shape(ours["usage"]) == _shape(real["usage"])
    assert set(ours["choices"][0]["message"]) == set(real["choices"][0]["message"])
    assert ours["choices"][0]["finish_reason"] == "stop"
    assert (
        "\\boxed{" in ours["choices"][0]["message"]["content"]
        or "lean" in ours["choices"][0]["message"]["content"]
    )


async def test_search_response_has_the_real_tavily_fields(sim: Simulator, shared_payloads: Path) -> None:
    real = _parsed_bodies(shared_payloads / "pydantic-ai" / "test_basic_search.yaml")[0]
    async with httpx.AsyncClient() as http:
        client = AsyncTavilyClient(api_key="tvly-sim", api_base_url=sim.search_base_url, client=http)
        ours = await client.search("Lake Vessa ferry", search_depth="basic", max_results=5)
    assert set(ours) == set(real)
    assert len(ours["results"]) == 5
    for result in ours["results"]:
        # published_date is the one extra (Tavily sends it on news results).
        assert set(result) == set(real["results"][0]) | {"published_date"}
        # Score and body as Tavily sends them: a float relevance in [0, 1]; no body unless asked.
        assert all(isinstance(r["score"], float) and 0 <= r["score"] <= 1 for r in (result, *real["results"]))
        assert result["raw_content"] is None and real["results"][0]["raw_content"] is None
    async with httpx.AsyncClient() as http:
        client = AsyncTavilyClient(api_key="tvly-sim", api_base_url=sim.search_base_url, client=http)
        asked = await client.search("Lake Vessa ferry", max_results=5, include_raw_content=True)
    bodies = [r["raw_content"] for r in asked["results"]]
    assert bodies and all(
        isinstance(b, str) and b.startswith(r["content"])
        for b, r in zip(bodies, asked["results"], strict=True)
    )
    assert ours["answer"] is None and ours["follow_up_questions"] is None and ours["images"] == []
    assert isinstance(ours["response_time"], float) and len(ours["request_id"]) == 36
    assert ours["query"] == "Lake Vessa ferry"


async def test_tavily_401_has_the_real_shape_and_reaches_the_client_as_invalid_key(
    shared_payloads: Path,
) -> None:
    real = _vcr_error_body(shared_payloads / "openllmetry" / "test_agents@feb570b0.yaml", 401)
    config = SimConfig(search=FaultConfig(revoked_keys=frozenset({"tvly-revoked"})))
    with Simulator(config) as sim:
        raw = httpx.post(
            sim.search_base_url + "/search",
            json={"query": "x"},
            headers={"Authorization": "Bearer tvly-revoked"},
        )
        assert raw.status_code == 401 and raw.json() == real
        async with httpx.AsyncClient() as http:
            client = AsyncTavilyClient(api_key="tvly-revoked", api_base_url=sim.search_base_url, client=http)
            with pytest.raises(InvalidAPIKeyError, match="missing or invalid API key"):
                await client.search("x")
        # tavily-python never overwrites a header already on an injected client: use a fresh one.
        async with httpx.AsyncClient() as http:
            ok = AsyncTavilyClient(api_key="tvly-good", api_base_url=sim.search_base_url, client=http)
            assert (await ok.search("x"))["results"]


def test_openai_401_has_the_real_shape_and_does_not_echo_the_key(shared_payloads: Path) -> None:
    path = (
        shared_payloads
        / "openinference"
        / "test_error_status_code_and_exception_events_with_invalid_api_key.yaml"
    )
    real = _vcr_error_body(path, 401)
    secret = "sk-revoked-0123456789abcdef"
    config = SimConfig(chat=FaultConfig(revoked_keys=frozenset({secret})))
    with Simulator(config) as sim:
        response = httpx.post(
            sim.llm_base_url + "/chat/completions",
            json={"model": "sim/careful", "messages": [{"role": "user", "content": "hi"}]},
            headers={"Authorization": f"Bearer {secret}"},
        )
        missing = httpx.post(sim.llm_base_url + "/chat/completions", json={"model": "sim/careful"})
    assert response.status_code == 401
    assert _shape(response.json()) == _shape(real)
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert secret not in response.text
    assert missing.status_code == 401 and "didn't provide an API key" in missing.json()["error"]["message"]


def test_unknown_model_is_a_real_404_model_not_found(sim: Simulator, shared_payloads: Path) -> None:
    data = yaml.load(
        (shared_payloads / "pydantic-ai" / "test_model_name_suggestion[openai-chat].yaml").read_text(),
        Loader=yaml.CSafeLoader,
    )
    real_body = next(
        i["response"]["parsed_body"] for i in data["interactions"] if i["response"]["status"]["code"] == 404
    )
    response = httpx.post(
        sim.llm_base_url + "/chat/completions",
        json={"model": "gpt-nonexistent", "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": "Bearer sk-sim"},
    )
    assert response.status_code == 404
    assert _shape(response.json()) == _shape(real_body)
    assert response.json()["error"]["code"] == "model_not_found"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b'{"messages": []}', "model parameter"),
        (b'{"model": "sim/careful", "messages": []}', "non-empty array"),
    ],
)
def test_bad_chat_requests_get_a_specific_400(sim: Simulator, body: bytes, message: str) -> None:
    response = httpx.post(
        sim.llm_base_url + "/chat/completions", content=body, headers={"Authorization": "Bearer sk-sim"}
    )
    assert response.status_code == 400 and message in response.json()["error"]["message"]
