"""Robust parsing of OpenAI-compatible ``/chat/completions`` bodies into ``ChatResponse``.

Real providers deviate from the OpenAI shape in ways the fixtures under
``../shared/fixtures/real-payloads`` show: OpenRouter pads bodies with keep-alive whitespace,
Gemini's compatibility endpoint returns empty tool-call ids, Cloudflare returns ``content``
as a JSON object and omits ``usage``, OpenRouter reports upstream failures as an ``error``
object inside a 200 body, Mistral's Magistral returns ``content`` as text and thinking blocks
(split by ``content_blocks``: thinking becomes ``ChatResponse.reasoning``). All of these parse
here; anything else is a ``MalformedBodyError`` — including a ``usage`` number out of range
(``usage_cost``: 10^30 tokens is a provider defect, not a count the store could hold).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from oracleproto.errors import ErrorKind
from oracleproto.primitives.hashing import canonical_json, sha256_16
from oracleproto.primitives.usage_cost import (
    UsageOutOfRangeError,
    cached_prompt_tokens,
    provider_cost_usd,
    token_count,
)
from oracleproto.providers.classify import classify_error_object
from oracleproto.providers.content_blocks import echo_text, split_content
from oracleproto.providers.types import ChatResponse, Message, ToolCall, Usage


class MalformedBodyError(ValueError):
    """A 200 body that is not a usable chat completion."""


class ErrorInBodyError(Exception):
    """A 200 body that carries an ``error`` object instead of choices."""

    def __init__(self, kind: ErrorKind, detail: str, error: Any = None) -> None:
        self.kind = kind
        self.detail = detail
        #: The error object as sent (a ``model_not_found`` code stops the run, see ``llm``).
        self.error = error
        super().__init__(f"{kind.value}: {detail}")


def load_json_body(raw: bytes | str) -> Any:
    """Decode a JSON body, tolerating leading keep-alive whitespace; ``MalformedBodyError`` otherwise."""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    try:
        return json.loads(text.lstrip())
    except json.JSONDecodeError as exc:
        preview = text.strip()[:120]
        raise MalformedBodyError(f"response body is not JSON ({exc.msg}): {preview!r}") from exc
    except (ValueError, RecursionError) as exc:
        # An integer of more than 4,300 digits (Python's conversion limit) or nesting deeper than
        # the interpreter's stack: the body is JSON no usable reply looks like.
        what = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(";")[0]
        raise MalformedBodyError(f"response body is not usable JSON ({what})") from None


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def parse_usage(usage: Any) -> Usage:
    """Token usage: reasoning and cached tokens from the details, the provider-reported cost.

    A number out of range (``usage_cost``) raises ``MalformedBodyError``: the reply is a defect.
    """
    if not isinstance(usage, dict):
        return Usage()
    details = usage.get("completion_tokens_details")
    reasoning_field = "completion_tokens_details.reasoning_tokens"
    try:
        reasoning = (
            token_count(details.get("reasoning_tokens"), reasoning_field, strict=True)
            if isinstance(details, dict)
            else None
        )
        return Usage(
            prompt_tokens=token_count(usage.get("prompt_tokens"), "prompt_tokens", strict=True),
            completion_tokens=token_count(usage.get("completion_tokens"), "completion_tokens", strict=True),
            reasoning_tokens=reasoning,
            cost_usd=provider_cost_usd(usage, strict=True),
            cached_tokens=cached_prompt_tokens(usage, strict=True),
        )
    except UsageOutOfRangeError as exc:
        raise MalformedBodyError(f"the reply's {exc}: a provider defect") from None


def body_usage(raw: bytes | str) -> Usage | None:
    """The ``usage`` of any reply body (an error reply too); ``None`` when it reports none (or a
    defective one: the reply already failed, its billing cannot be read)."""
    try:
        body = load_json_body(raw)
        usage = parse_usage(body.get("usage")) if isinstance(body, dict) else Usage()
    except MalformedBodyError:
        return None
    return usage if usage.reported else None


def synthesize_tool_call_id(response_id: str | None, index: int, name: str, arguments: str) -> str:
    """A deterministic id for a tool call that arrived without one (same body → same id)."""
    return "call_" + sha256_16(canonical_json([response_id, index, name, arguments]))


def _parse_tool_calls(raw: Any, response_id: str | None) -> tuple[tuple[ToolCall, ...], list[dict[str, Any]]]:
    if not isinstance(raw, list):
        return (), []
    calls: list[ToolCall] = []
    wire: list[dict[str, Any]] = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise MalformedBodyError(f"tool_calls[{index}] is not an object")
        # A custom tool call (``type: "custom"``) names itself and carries free-form ``input`` in a
        # ``custom`` object: its name is the one the §6 checks read, its input their arguments.
        custom = item.get("type") == "custom"
        part, given_key = ("custom", "input") if custom else ("function", "arguments")
        called = item.get(part)
        if not isinstance(called, dict):
            raise MalformedBodyError(f"tool_calls[{index}] has no {part} object")
        name = called.get("name")
        if not isinstance(name, str):
            raise MalformedBodyError(f"tool_calls[{index}].{part}.name is missing")
        given = called.get(given_key)
        # The echo (profile §2): a string, the JSON text of any other value (null: "null"); the
        # tool-call checks (§6) read null as {}.
        echoed = given if isinstance(given, str) else json.dumps(given, ensure_ascii=False)
        arguments = "{}" if given is None else echoed
        # §2 replaces a missing or empty id only: any other value (a number, an object) is the id.
        raw_id = item.get("id")
        provided = None if raw_id is None or raw_id == "" else raw_id
        call_id = synthesize_tool_call_id(response_id, index, name, echoed) if provided is None else provided
        calls.append(ToolCall(id=call_id, name=name, arguments=arguments, raw_id=provided))
        # provider_order rewrites only ``function.arguments`` (§2); a custom call's object is echoed as sent.
        wire.append(
            {**item, "id": call_id}
            if custom
            else {**item, "id": call_id, "function": {**called, "arguments": echoed}}
        )
    return tuple(calls), wire


def parse_chat_completion(raw: bytes | str, *, latency_ms: int, received_at: datetime) -> ChatResponse:
    """Parse a 200 body; ``ErrorInBodyError`` for an embedded error, ``MalformedBodyError`` for junk."""
    body = load_json_body(raw)
    if not isinstance(body, dict):
        raise MalformedBodyError(f"response body is a JSON {type(body).__name__}, expected an object")
    choices = body.get("choices")
    error = body.get("error")
    if error and not choices:
        detail = error.get("message") if isinstance(error, dict) else error
        raise ErrorInBodyError(classify_error_object(error), str(detail), error)
    base_resp = body.get("base_resp")
    if not choices and isinstance(base_resp, dict) and base_resp.get("status_code") not in (None, 0, "0"):
        # MiniMax's native envelope: HTTP 200 with base_resp {status_code, status_msg} (1008 = balance).
        message = base_resp.get("status_msg")
        raise ErrorInBodyError(
            classify_error_object({"code": base_resp.get("status_code"), "message": message}), str(message)
        )
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedBodyError("response body has no choices")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise MalformedBodyError("choices[0] has no message object")
    response_id = _optional_str(body.get("id"))
    split = split_content(message.get("content"))
    content = split.text
    tool_calls, wire_calls = _parse_tool_calls(message.get("tool_calls"), response_id)
    echoed = echo_text(message.get("content"))
    assistant: Message = {**message, "role": message.get("role") or "assistant", "content": echoed}
    if wire_calls:
        assistant["tool_calls"] = wire_calls
    else:
        # An empty list is rejected by some providers when the message is sent back.
        assistant.pop("tool_calls", None)
    return ChatResponse(
        content=content,
        tool_calls=tool_calls,
        finish_reason=_optional_str(choice.get("finish_reason")),
        usage=parse_usage(body.get("usage")),
        response_id=response_id,
        system_fingerprint=_optional_str(body.get("system_fingerprint")),
        service_tier=_optional_str(body.get("service_tier")),
        served_model=_optional_str(body.get("model")),
        latency_ms=latency_ms,
        received_at=received_at,
        assistant_message=assistant,
        reasoning=split.reasoning,
        provider_message=message,
    )
