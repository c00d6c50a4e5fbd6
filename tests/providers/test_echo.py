"""The assistant echo (profile §2): provider_order is today's message, declared_order the SDK's.

The declared_order mode is checked against the earlier harness itself: every assistant message in
its captured requests is its echo of an earlier response, and must come out byte for byte.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from oracleproto.profile import builtin_profile
from oracleproto.profile.model import AssistantEcho
from oracleproto.providers.chat_parse import (
    MalformedBodyError,
    parse_chat_completion,
    synthesize_tool_call_id,
)
from oracleproto.providers.echo import declared, echo_message, tool_call_id_for
from oracleproto.providers.types import ChatResponse, ToolCall, Usage
from tests.providers.earlier import CAPTURE_FILES, capture, current_profile, earlier_profile

WHEN = datetime(2026, 1, 1, tzinfo=UTC)
PROVIDER = AssistantEcho("provider_order")
ORDERS = {
    "message": ("content", "refusal", "role", "annotations", "audio", "function_call", "tool_calls"),
    "tool_call": ("id", "function", "type"),
    "custom_tool_call": ("id", "custom", "type"),
    "function": ("arguments", "name"),
    "custom": ("input", "name"),
    "function_call": ("arguments", "name"),
    "annotation": ("type", "url_citation"),
    "url_citation": ("end_index", "start_index", "title", "url"),
    "audio": ("id", "data", "expires_at", "transcript"),
}
DECLARED = AssistantEcho("declared_order", ORDERS)


def parse(message: dict[str, Any], response_id: str | None = "chatcmpl-9") -> ChatResponse:
    body = {"id": response_id, "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    return parse_chat_completion(json.dumps(body), latency_ms=1, received_at=WHEN)


def provider_only(message: dict[str, Any]) -> ChatResponse:
    """A response carrying only the provider's message (a shape ``chat_parse`` would refuse)."""
    return ChatResponse(
        content=None,
        tool_calls=(),
        finish_reason=None,
        usage=Usage(),
        response_id=None,
        system_fingerprint=None,
        service_tier=None,
        served_model=None,
        latency_ms=0,
        received_at=WHEN,
        provider_message=message,
    )


def keys(value: dict[str, Any]) -> list[str]:
    return list(value)


def test_declared_puts_listed_keys_first_then_the_rest_in_given_order() -> None:
    assert keys(declared({"z": 1, "b": 2, "a": 3, "y": 4}, ("a", "b", "missing"))) == ["a", "b", "z", "y"]
    assert declared({}, ("a",)) == {}


def test_provider_order_is_the_normalised_message_as_today() -> None:
    response = parse(
        {
            "tool_calls": [
                {"type": "function", "function": {"name": "web_search", "arguments": {"query": "x"}}}
            ],
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "extra_content": {"k": 1},
        }
    )
    echoed = echo_message(response, PROVIDER)
    assert echoed == response.assistant_message and echoed is not response.assistant_message
    # Content joined, arguments a string, id synthesised, role/content appended at the end.
    assert keys(echoed) == ["tool_calls", "content", "extra_content", "role"]
    assert echoed["content"] == "ab" and echoed["tool_calls"][0]["function"]["arguments"] == '{"query": "x"}'
    call = response.tool_calls[0]
    assert echoed["tool_calls"][0]["id"] == call.id and call.id.startswith("call_") and call.raw_id is None
    assert tool_call_id_for(call, PROVIDER) == call.id and tool_call_id_for(call, DECLARED) == ""
    # The echo is a copy: editing it leaves the response alone.
    echoed["extra_content"]["k"] = 2
    assert response.assistant_message["extra_content"] == {"k": 1}


def test_declared_order_echoes_the_provider_message_unchanged_but_reordered() -> None:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": "a"}],
        "reasoning_content": None,
        "tool_calls": [
            {"index": 0, "type": "function", "function": {"name": "web_search", "arguments": "{}"}},
            {"type": "custom", "custom": {"name": "c", "input": "i", "x": 1}, "id": "c1"},
        ],
        "annotations": [
            {
                "url_citation": {"url": "u", "title": "t", "start_index": 0, "end_index": 1},
                "type": "url_citation",
            }
        ],
        "function_call": {"name": "f", "arguments": "{}"},
        "audio": {"transcript": "t", "id": "a1"},
        "refusal": None,
    }
    # The provider's message alone (its function_call and audio are not parsed): the echo rules.
    response = provider_only(message)
    echoed = echo_message(response, DECLARED)
    assert echoed == message  # same keys and values: nulls, block content, missing id all kept
    assert keys(echoed) == [
        "content",
        "refusal",
        "role",
        "annotations",
        "audio",
        "function_call",
        "tool_calls",
        "reasoning_content",
    ]
    first, second = echoed["tool_calls"]
    assert keys(first) == ["function", "type", "index"] and keys(first["function"]) == ["arguments", "name"]
    assert keys(second) == ["id", "custom", "type"] and keys(second["custom"]) == ["input", "name", "x"]
    assert keys(echoed["annotations"][0]) == ["type", "url_citation"]
    assert keys(echoed["annotations"][0]["url_citation"]) == ["end_index", "start_index", "title", "url"]
    assert keys(echoed["function_call"]) == ["arguments", "name"] and keys(echoed["audio"]) == [
        "id",
        "transcript",
    ]
    # The provider's message inside the response is not touched.
    assert keys(response.provider_message) == keys(message)
    assert keys(response.provider_message["tool_calls"][0]) == ["index", "type", "function"]
    echoed["audio"]["id"] = "changed"
    assert message["audio"]["id"] == "a1"


def test_parsed_responses_keep_the_providers_message_exactly() -> None:
    message = {
        "content": None,
        "role": "assistant",
        "tool_calls": [{"type": "function", "function": {"arguments": {"query": "q"}, "name": "web_search"}}],
    }
    response = parse(message)
    assert response.provider_message == message
    assert keys(response.provider_message["tool_calls"][0]) == ["type", "function"]
    echoed = echo_message(response, DECLARED)
    # No id, arguments still an object: the declared echo sends what the provider sent.
    assert echoed == message and keys(echoed["tool_calls"][0]) == ["function", "type"]


ABSENT = object()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("call_1", "call_1"),
        ("", None),
        (ABSENT, None),
        (None, None),
        # §2 replaces only a missing or empty id: any other JSON value is the provider's id.
        (7, 7),
        (0, 0),
        (False, False),
        ({"k": 1}, {"k": 1}),
        ([], []),
    ],
)
def test_raw_id_is_the_providers_id_or_none(raw: Any, expected: Any) -> None:
    call: dict[str, Any] = {"type": "function", "function": {"name": "web_search", "arguments": "{}"}}
    if raw is not ABSENT:
        call["id"] = raw
    response = parse({"role": "assistant", "content": None, "tool_calls": [call]})
    (parsed,) = response.tool_calls
    assert parsed.raw_id == expected and type(parsed.raw_id) is type(expected)
    assert tool_call_id_for(parsed, DECLARED) == ("" if expected is None else expected)
    echoed = echo_message(response, PROVIDER)["tool_calls"][0]
    if expected is None:
        synthesised = synthesize_tool_call_id(response.response_id, 0, "web_search", "{}")
        assert parsed.id == echoed["id"] == synthesised
    else:
        assert parsed.id == echoed["id"] == expected and type(echoed["id"]) is type(expected)
    assert tool_call_id_for(parsed, PROVIDER) == parsed.id


def test_empty_tool_calls_and_odd_values_are_echoed_unchanged() -> None:
    message = {"content": "x", "tool_calls": [], "audio": None, "function_call": "not an object", "role": ""}
    echoed = echo_message(parse(message), DECLARED)
    assert echoed == message and keys(echoed) == ["content", "role", "audio", "function_call", "tool_calls"]
    # provider_order drops the empty list and fills the empty role, as today.
    assert "tool_calls" not in echo_message(parse(message), PROVIDER)


def test_a_response_not_parsed_from_a_body_is_rebuilt_in_both_modes() -> None:
    fake = ChatResponse(
        content=None,
        tool_calls=(ToolCall(id="c1", name="web_search", arguments='{"query": "q"}'),),
        finish_reason="tool_calls",
        usage=Usage(),
        response_id=None,
        system_fingerprint=None,
        service_tier=None,
        served_model=None,
        latency_ms=0,
        received_at=WHEN,
    )
    rebuilt = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "web_search", "arguments": '{"query": "q"}'},
            }
        ],
    }
    assert echo_message(fake, PROVIDER) == rebuilt
    declared_echo = echo_message(fake, DECLARED)
    assert declared_echo == rebuilt and keys(declared_echo) == ["content", "role", "tool_calls"]
    assert keys(declared_echo["tool_calls"][0]) == ["id", "function", "type"]


def test_untrusted_text_in_every_code_point_class_survives_the_echo() -> None:
    text = '\x00\x1f"\\/\u2028\u00e9\U0001f600\ud800 {{x}} \\boxed{A}'
    message = {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {"id": text, "type": "function", "function": {"name": "web_search", "arguments": text}}
        ],
    }
    response = parse(message)
    for echo in (PROVIDER, DECLARED):
        echoed = echo_message(response, echo)
        assert echoed["content"] == text and echoed["tool_calls"][0]["function"]["arguments"] == text
        # A lone surrogate has no UTF-8 form: the compact style escapes it, so the bytes decode back.
        wire = builtin_profile().request_json.llm.encode(echoed)
        assert json.loads(wire.decode("utf-8")) == echoed


def test_the_fixture_profiles_choose_the_modes() -> None:
    assert current_profile().llm_request.assistant_echo.mode == "provider_order"
    assert builtin_profile().llm_request.assistant_echo.mode == "provider_order"
    earlier = earlier_profile().llm_request.assistant_echo
    assert earlier.mode == "declared_order" and dict(earlier.declared_key_orders) == ORDERS


def _responses(exchanges: Any) -> list[tuple[int, dict[str, Any], ChatResponse]]:
    out = []
    for exchange in exchanges:
        if exchange.is_chat:
            parsed = parse_chat_completion(exchange.response, latency_ms=1, received_at=WHEN)
            out.append((exchange.seq, exchange.response_json["choices"][0]["message"], parsed))
    return out


@pytest.mark.shared
@pytest.mark.parametrize("name", CAPTURE_FILES)
def test_declared_order_reproduces_every_echo_of_the_earlier_harness(name: str) -> None:
    profile = earlier_profile()
    echo, style = profile.llm_request.assistant_echo, profile.request_json.llm
    exchanges = capture(name)
    responses = _responses(exchanges)
    pairs = 0
    for exchange in exchanges:
        if not exchange.is_chat:
            continue
        request = exchange.request_json
        rebuilt = []
        for message in request["messages"]:
            if message["role"] != "assistant":
                rebuilt.append(message)
                continue
            # The response this message echoes: the latest earlier one with the same content.
            source = [parsed for seq, raw, parsed in responses if seq < exchange.seq and raw == message]
            assert source, f"{name} seq {exchange.seq}: no earlier response holds this assistant message"
            echoed = echo_message(source[-1], echo)
            assert style.dumps(echoed) in exchange.body.decode("utf-8"), f"{name} seq {exchange.seq}"
            rebuilt.append(echoed)
            pairs += 1
        # The whole request, with every assistant message replaced by our echo, is the captured bytes.
        assert style.encode({**request, "messages": rebuilt}) == exchange.body, f"{name} seq {exchange.seq}"
    assert pairs >= 30, pairs


@pytest.mark.parametrize(
    ("function", "echoed"),
    [
        ({"name": "web_search", "arguments": None}, "null"),
        ({"name": "web_search"}, "null"),
        ({"name": "web_search", "arguments": {"query": "é"}}, '{"query": "é"}'),
        ({"name": "web_search", "arguments": ""}, ""),
    ],
)
def test_provider_order_echoes_arguments_as_a_string_and_the_checks_read_null_as_empty(
    function: dict[str, Any], echoed: str
) -> None:
    # Profile §2: arguments become a string, JSON text if not one; §6: null arguments are checked as {}.
    call = {"type": "function", "function": function}
    response = parse({"role": "assistant", "content": None, "tool_calls": [call]})
    (wire,) = echo_message(response, PROVIDER)["tool_calls"]
    assert wire["function"]["arguments"] == echoed
    assert wire["id"] == synthesize_tool_call_id("chatcmpl-9", 0, "web_search", echoed)
    (parsed,) = response.tool_calls
    assert parsed.id == wire["id"]
    assert parsed.arguments == ("{}" if function.get("arguments") is None else echoed)


def test_a_custom_tool_call_is_parsed_by_its_name_and_input_and_echoed_as_sent() -> None:
    # Profile §2 orders a custom call's keys by custom_tool_call and custom; §6 answers every call.
    grammar = {"type": "custom", "custom": {"name": "grammar", "input": "free text", "x": 1}, "id": "c1"}
    search = {"custom": {"input": '{"query": "q"}', "name": "web_search"}, "type": "custom"}
    empty = {"type": "custom", "id": "", "custom": {"name": "web_search", "input": None}}
    message = {"role": "assistant", "content": None, "tool_calls": [grammar, search, empty]}
    response = parse(message)
    synthesised = synthesize_tool_call_id("chatcmpl-9", 1, "web_search", '{"query": "q"}')
    assert response.tool_calls == (
        ToolCall("c1", "grammar", "free text", raw_id="c1"),
        ToolCall(synthesised, "web_search", '{"query": "q"}', raw_id=None),
        ToolCall(synthesize_tool_call_id("chatcmpl-9", 2, "web_search", "null"), "web_search", "{}"),
    )
    # provider_order: ids filled in, each custom object as the provider sent it (null input kept).
    wires = echo_message(response, PROVIDER)["tool_calls"]
    assert wires == [grammar, {**search, "id": synthesised}, {**empty, "id": response.tool_calls[2].id}]
    assert keys(wires[1]) == ["custom", "type", "id"] and keys(wires[1]["custom"]) == ["input", "name"]
    # declared_order: the provider's calls unchanged (no id added), in the declared key orders.
    declared_calls = echo_message(response, DECLARED)["tool_calls"]
    assert declared_calls == [grammar, search, empty]
    assert [keys(c) for c in declared_calls] == [
        ["id", "custom", "type"],
        ["custom", "type"],
        ["id", "custom", "type"],
    ]
    assert keys(declared_calls[0]["custom"]) == ["input", "name", "x"]


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        ({"type": "custom", "function": {"name": "web_search", "arguments": "{}"}}, "has no custom object"),
        ({"type": "custom", "custom": {"input": "x"}}, r"tool_calls\[0\]\.custom\.name is missing"),
        ({"type": "function", "custom": {"name": "c", "input": "x"}}, "has no function object"),
    ],
)
def test_a_call_without_the_object_its_type_names_is_malformed(call: dict[str, Any], problem: str) -> None:
    with pytest.raises(MalformedBodyError, match=problem):
        parse({"role": "assistant", "content": None, "tool_calls": [call]})
