"""Parsing chat completion bodies: every real non-streaming success, and each quirk on its own."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from oracleproto.errors import ErrorKind
from oracleproto.providers.chat_parse import (
    ErrorInBodyError,
    MalformedBodyError,
    parse_chat_completion,
    synthesize_tool_call_id,
)
from tests.providers.payloads import Interaction, all_interactions

WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def parse(body: bytes | str) -> object:
    return parse_chat_completion(body, latency_ms=7, received_at=WHEN)


def successes(root: Path) -> list[Interaction]:
    return [i for i in all_interactions(root) if i.is_chat and i.status == 200 and not i.is_streaming]


def test_every_real_success_parses(shared_payloads: Path) -> None:
    items = successes(shared_payloads)
    assert len(items) >= 50  # the fixture set has 51 non-streaming successes
    with_tools = 0
    for item in items:
        raw = json.loads(item.body.decode().lstrip())
        response = parse_chat_completion(item.body, latency_ms=1, received_at=WHEN)
        message = raw["choices"][0]["message"]
        assert response.finish_reason == raw["choices"][0]["finish_reason"], item.source
        assert response.response_id == raw.get("id"), item.source
        assert response.served_model == raw.get("model"), item.source
        assert response.system_fingerprint == raw.get("system_fingerprint"), item.source
        assert response.service_tier == raw.get("service_tier"), item.source
        assert len(response.tool_calls) == len(message.get("tool_calls") or []), item.source
        for call in response.tool_calls:
            assert call.id and call.name
            json.loads(call.arguments)
        with_tools += bool(response.tool_calls)
        usage = raw.get("usage") or {}
        assert response.usage.prompt_tokens == usage.get("prompt_tokens"), item.source
        details = usage.get("completion_tokens_details") or {}
        assert response.usage.reasoning_tokens == details.get("reasoning_tokens"), item.source
        assert response.assistant_message["role"] == "assistant"
        content = response.assistant_message["content"]
        assert content is None or isinstance(content, str)
    assert with_tools >= 15


def _one(root: Path, source: str, index: int) -> bytes:
    for item in all_interactions(root):
        if item.source == source and item.index == index:
            return item.body
    raise AssertionError(source)


def test_openrouter_keepalive_padding_and_cost(shared_payloads: Path) -> None:
    body = _one(shared_payloads, "chatlas/test_provider_openrouter__test_data_extraction.yaml", 0)
    assert body[:1].isspace()
    response = parse_chat_completion(body, latency_ms=1, received_at=WHEN)
    assert response.response_id is not None and response.response_id.startswith("gen-")
    assert response.usage.cost_usd is not None


def test_cloudflare_object_content_and_missing_usage(shared_payloads: Path) -> None:
    body = _one(shared_payloads, "chatlas/test_cloudflare_data_extraction.yaml", 0)
    response = parse_chat_completion(body, latency_ms=1, received_at=WHEN)
    assert response.content is not None
    assert json.loads(response.content) == {"title": "Apples are tasty", "author": "Hadley Wickham"}
    assert response.usage.prompt_tokens is None and response.usage.completion_tokens is None


def test_gemini_empty_tool_call_ids_are_synthesized_deterministically(shared_payloads: Path) -> None:
    body = _one(shared_payloads, "pydantic-ai/test_compatible_api_with_tool_calls_without_id.yaml", 0)
    assert b'"id": ""' in body
    first = parse_chat_completion(body, latency_ms=1, received_at=WHEN)
    again = parse_chat_completion(body, latency_ms=2, received_at=WHEN)
    assert first.tool_calls and all(c.id.startswith("call_") for c in first.tool_calls)
    assert [c.id for c in first.tool_calls] == [c.id for c in again.tool_calls]
    assert [c["id"] for c in first.assistant_message["tool_calls"]] == [c.id for c in first.tool_calls]


def test_reasoning_tokens_and_service_tier(shared_payloads: Path) -> None:
    body = _one(shared_payloads, "pydantic-ai/test_max_completion_tokens[o3-mini].yaml", 0)
    response = parse_chat_completion(body, latency_ms=1, received_at=WHEN)
    assert response.usage.reasoning_tokens == 64
    assert response.service_tier == "default"
    assert response.system_fingerprint


def test_missing_ids_get_distinct_ids_per_position() -> None:
    body = {
        "id": "r1",
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "type": "function",
                            "function": {"name": "web_search", "arguments": '{"query":"a"}'},
                        },
                        {
                            "id": "",
                            "type": "function",
                            "function": {"name": "web_search", "arguments": '{"query":"a"}'},
                        },
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
    }
    response = parse_chat_completion(json.dumps(body), latency_ms=1, received_at=WHEN)
    ids = [c.id for c in response.tool_calls]
    assert len(set(ids)) == 2
    assert ids[0] == synthesize_tool_call_id("r1", 0, "web_search", '{"query":"a"}')


def test_object_arguments_become_json_text() -> None:
    body = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [
                        {"id": "c", "function": {"name": "web_search", "arguments": {"query": "x"}}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    response = parse_chat_completion(json.dumps(body), latency_ms=1, received_at=WHEN)
    assert json.loads(response.tool_calls[0].arguments) == {"query": "x"}
    assert response.assistant_message["role"] == "assistant"


def test_extra_fields_are_kept_in_the_assistant_message() -> None:
    body = {
        "choices": [
            {
                "message": {"role": "assistant", "content": "x", "reasoning_content": "r"},
                "finish_reason": "stop",
            }
        ],
        "provider": "X",
        "time_info": {"a": 1},
    }
    response = parse_chat_completion(json.dumps(body), latency_ms=1, received_at=WHEN)
    assert response.assistant_message == {"role": "assistant", "content": "x", "reasoning_content": "r"}


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ({"error": {"code": 502, "message": "Network connection lost."}}, ErrorKind.SERVER_5XX),
        ({"error": {"code": 429, "message": "Provider returned error"}}, ErrorKind.RATE_LIMIT),
        ({"error": {"code": 400, "message": "Token limit reached"}}, ErrorKind.BAD_REQUEST),
    ],
)
def test_error_object_inside_200_is_classified(body: dict[str, object], kind: ErrorKind) -> None:
    with pytest.raises(ErrorInBodyError) as info:
        parse(json.dumps(body))
    assert info.value.kind is kind


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("<html>gateway</html>", "not JSON"),
        ("", "not JSON"),
        ("[1, 2]", "JSON list"),
        ('{"choices": []}', "no choices"),
        ('{"id": "x"}', "no choices"),
        ('{"choices": [{"finish_reason": "stop"}]}', "no message"),
        ('{"choices": [{"message": {"tool_calls": [{"function": {}}]}}]}', "name is missing"),
    ],
)
def test_malformed_bodies_say_what_is_wrong(body: str, message: str) -> None:
    with pytest.raises(MalformedBodyError, match=message):
        parse(body)
