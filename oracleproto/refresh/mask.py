"""Volatile fields: what may differ between two recordings of the same call without being drift.

Masked: timing and bookkeeping of the recording (latency, recorded_at, attempts, request
count, generation), the concrete URI (loopback ports are random; the canonical host is
compared), request headers (SDK versions; never part of the key), per-response identifiers
(``id``, ``created``, tool-call ids — real providers draw them at random, and a tool-call id
echoes into the next request), per-response headers such as ``date`` or request ids, and
keep-alive whitespace around JSON bodies. Provider markers (``system_fingerprint``, served
``model``, ``service_tier``) are NOT masked: a change there is reported as provider drift.
"""

from __future__ import annotations

import json
from typing import Any

from oracleproto.transport.entry import Entry

#: Entry fields that describe the recording, not the exchange.
VOLATILE_ENTRY_FIELDS = ("latency_ms", "recorded_at", "attempts", "requests", "generation", "uri")
#: Response headers that change on every call.
VOLATILE_RESPONSE_HEADERS = frozenset(
    {
        "age",
        "cf-ray",
        "content-length",
        "date",
        "openai-processing-ms",
        "request-id",
        "set-cookie",
        "via",
        "x-amzn-trace-id",
        "x-envoy-upstream-service-time",
        "x-request-id",
    }
)
VOLATILE_HEADER_PREFIXES = ("x-ratelimit-",)
#: Top-level response body members that identify one response.
VOLATILE_BODY_FIELDS = ("id", "created", "request_id", "response_time")
MASK = "<masked>"


def _volatile_header(name: str) -> bool:
    return name in VOLATILE_RESPONSE_HEADERS or name.startswith(VOLATILE_HEADER_PREFIXES)


def parse_body(raw: bytes | str) -> tuple[Any, bool]:
    """(parsed JSON, True) or (text, False)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        return json.loads(text), True
    except json.JSONDecodeError:
        return text, False


def _mask_tool_ids(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    out = dict(message)
    if "tool_call_id" in out:
        out["tool_call_id"] = MASK
    if isinstance(out.get("tool_calls"), list):
        out["tool_calls"] = [
            {**c, "id": MASK} if isinstance(c, dict) and "id" in c else c for c in out["tool_calls"]
        ]
    return out


def masked_request(entry: Entry) -> dict[str, Any]:
    """The canonical request with tool-call ids masked."""
    body, _ = parse_body(entry.request_body)
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        body = {**body, "messages": [_mask_tool_ids(m) for m in body["messages"]]}
    return {**entry.request_meta, "body": body}


def masked_response(entry: Entry) -> dict[str, Any]:
    """Status, exception, non-volatile headers and the body with volatile members masked."""
    body, is_json = parse_body(entry.body)
    if is_json and isinstance(body, dict):
        body = {k: (MASK if k in VOLATILE_BODY_FIELDS else v) for k, v in body.items()}
        if isinstance(body.get("choices"), list):
            body["choices"] = [
                {**c, "message": _mask_tool_ids(c.get("message"))} if isinstance(c, dict) else c
                for c in body["choices"]
            ]
    headers = {k: v for k, v in entry.response_headers.items() if not _volatile_header(k)}
    return {"status": entry.status, "exception": entry.exception, "headers": headers, "body": body}


def masked_differences(old: Entry, new: Entry) -> list[str]:
    """Names of the volatile fields that differ between two recordings of one call."""
    out = [name for name in VOLATILE_ENTRY_FIELDS if getattr(old, name) != getattr(new, name)]
    if old.request_headers != new.request_headers:
        out.append("request_headers")
    for name in sorted(set(old.response_headers) | set(new.response_headers)):
        if _volatile_header(name) and old.response_headers.get(name) != new.response_headers.get(name):
            out.append(f"response_headers.{name}")
    old_body, old_json = parse_body(old.body)
    new_body, new_json = parse_body(new.body)
    if old_json and new_json and isinstance(old_body, dict) and isinstance(new_body, dict):
        out += [f"body.{k}" for k in VOLATILE_BODY_FIELDS if old_body.get(k) != new_body.get(k)]
        if old_body == new_body and old.body != new.body:
            out.append("body.whitespace")
        old_ids = json.dumps(_tool_ids(old_body)) + json.dumps(_request_tool_ids(old))
        if old_ids != json.dumps(_tool_ids(new_body)) + json.dumps(_request_tool_ids(new)):
            out.append("tool_call_ids")
    return out


def _tool_ids(body: dict[str, Any]) -> list[Any]:
    choices = body.get("choices")
    if not isinstance(choices, list):
        return []
    ids: list[Any] = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        ids += [c.get("id") for c in calls or [] if isinstance(c, dict)]
    return ids


def _request_tool_ids(entry: Entry) -> list[Any]:
    body, _ = parse_body(entry.request_body)
    messages = body.get("messages") if isinstance(body, dict) else None
    ids: list[Any] = []
    for m in messages if isinstance(messages, list) else []:
        if isinstance(m, dict):
            ids.append(m.get("tool_call_id"))
            ids += [c.get("id") for c in m.get("tool_calls") or [] if isinstance(c, dict)]
    return ids


def harness_part(request: dict[str, Any]) -> dict[str, Any]:
    """The request minus the conversation history (messages from the first assistant turn on)."""
    body = request.get("body")
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return request
    lead: list[Any] = []
    for message in body["messages"]:
        if isinstance(message, dict) and message.get("role") in ("assistant", "tool"):
            break
        lead.append(message)
    return {**request, "body": {**body, "messages": lead}}
