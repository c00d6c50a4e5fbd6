"""The OpenAI ``chat.completion`` wire format: success bodies, error bodies, token counts.

Shapes follow real recorded payloads (``fixtures/real-payloads``): ``choices[].message`` with
``annotations``/``refusal``, ``usage.completion_tokens_details.reasoning_tokens``,
``system_fingerprint``, ``service_tier``; errors as ``{"error": {message, type, param, code}}``
pretty-printed with a trailing newline, as OpenAI sends them.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from typing import Any

from oracleproto.primitives.hashing import canonical_json
from oracleproto.sim import rng

#: Prefix caching: prompts below this size are never cached; hits come in blocks of this size.
CACHE_MIN_TOKENS = 1024
CACHE_BLOCK_TOKENS = 128
#: Share of the input price a cached prompt token costs.
CACHED_INPUT_SHARE = 0.1
#: xAI's cost unit: 1 USD = 10^10 ticks.
USD_TICKS_PER_USD = 10_000_000_000
#: 2026-01-01T00:00:00Z; ``created`` stamps are this plus a hash-derived offset (< 1 year).
_EPOCH_BASE = 1_767_225_600
_ALNUM = string.ascii_letters + string.digits


def _token_string(length: int, *parts: object) -> str:
    raw = rng.digest(*parts) + rng.digest("more", *parts)
    return "".join(_ALNUM[b % len(_ALNUM)] for b in raw[:length])


def tool_call_id(key: str, index: int) -> str:
    """The id of the ``index``-th tool call of the response seeded by ``key``."""
    return "call_" + _token_string(24, "call", key, index)


def count_tokens(text: str) -> int:
    """Deterministic token estimate: one token per four characters, at least one for non-empty text."""
    return (len(text) + 3) // 4


def prompt_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """Prompt token estimate: text length of every message and tool schema, plus per-message overhead."""
    total = 0
    for message in messages:
        total += 4 + count_tokens(canonical_json(message.get("content") or ""))
        if message.get("tool_calls"):
            total += count_tokens(canonical_json(message["tool_calls"]))
    if tools:
        total += count_tokens(canonical_json(tools))
    return total + 3


@dataclass(frozen=True)
class ToolCallOut:
    """One tool call to put into the assistant message."""

    name: str
    arguments: dict[str, Any]


def completion_body(
    *,
    key: str,
    model: str,
    fingerprint: str,
    content: str | None,
    tool_calls: list[ToolCallOut],
    prompt_tokens: int,
    reasoning_tokens: int,
    cached_tokens: int = 0,
    usage_extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A full ``chat.completion`` object; ``key`` seeds the id, ``created`` and tool-call ids.

    ``usage_extra`` is merged into ``usage`` (see :func:`cost_fields`): gateways that bill per call
    report what it cost there.
    """
    message: dict[str, Any] = {
        "role": "assistant",
        "content": content,
        "refusal": None,
        "annotations": [],
    }
    wire_calls: list[dict[str, Any]] = [
        {
            "id": tool_call_id(key, i),
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
        }
        for i, call in enumerate(tool_calls)
    ]
    if wire_calls:
        message["tool_calls"] = wire_calls
    visible = count_tokens(content or "") + sum(
        count_tokens(c["function"]["arguments"]) + 3 for c in wire_calls
    )
    completion = visible + reasoning_tokens
    return {
        "id": "chatcmpl-" + _token_string(29, "id", key),
        "object": "chat.completion",
        "created": _EPOCH_BASE + int(rng.unit("created", key) * 31_536_000),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if wire_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion,
            "total_tokens": prompt_tokens + completion,
            "prompt_tokens_details": {"cached_tokens": cached_tokens, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
            **(usage_extra or {}),
        },
        "service_tier": "default",
        "system_fingerprint": fingerprint,
    }


def cached_prefix_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
    """Prompt tokens a provider would serve from its prefix cache: OpenAI's rule, simplified.

    Only prompts of at least 1024 tokens are cached, in 128-token blocks, and only the prefix an
    earlier turn of the same conversation already sent (everything before the newest assistant
    turn) can hit.
    """
    total = prompt_tokens(messages, tools)
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    if total < CACHE_MIN_TOKENS or last_assistant < 0:
        return 0
    prefix = prompt_tokens(messages[:last_assistant], tools)
    return min(total, prefix // CACHE_BLOCK_TOKENS * CACHE_BLOCK_TOKENS)


def call_cost_usd(prices: tuple[float, float], prompt: int, cached: int, completion: int) -> float:
    """USD of one call at (input, output) USD per million tokens; cached input at a tenth."""
    usd_in, usd_out = prices
    return ((prompt - cached) * usd_in + cached * usd_in * CACHED_INPUT_SHARE + completion * usd_out) / 1e6


def cost_fields(style: str | None, usd: float) -> dict[str, Any]:
    """The ``usage`` keys a gateway adds to report ``usd``: OpenRouter's ``cost``, xAI's ticks, or none."""
    if style == "cost":
        return {"cost": round(usd, 10), "is_byok": False, "cost_details": {"upstream_inference_cost": None}}
    if style == "ticks":
        return {"cost_in_usd_ticks": round(usd * USD_TICKS_PER_USD)}
    return {}


def fingerprint_for(model: str, seed: int, revision: int = 0) -> str:
    """A stable ``system_fingerprint`` per served model, server seed and revision (``fp_`` + 10 hex)."""
    parts: tuple[object, ...] = ("fingerprint", model, seed) + ((revision,) if revision else ())
    return "fp_" + rng.digest(*parts).hex()[:10]


def error_body(message: str, type_: str, code: str | None, param: str | None = None) -> bytes:
    """An OpenAI error object, serialised the way the API sends it (indented, trailing newline)."""
    payload = {"error": {"message": message, "type": type_, "param": param, "code": code}}
    return (json.dumps(payload, indent=4) + "\n").encode("utf-8")


def invalid_key_body(shown_key: str) -> bytes:
    """The 401 ``invalid_api_key`` body; ``shown_key`` must already be redacted."""
    return error_body(
        f"Incorrect API key provided: {shown_key}. You can find your API key at "
        "https://platform.openai.com/account/api-keys.",
        "invalid_request_error",
        "invalid_api_key",
    )


def missing_key_body() -> bytes:
    """The 401 body OpenAI sends when no ``Authorization`` header is present."""
    return error_body(
        "You didn't provide an API key. You need to provide your API key in an Authorization header "
        "using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        "invalid_request_error",
        None,
    )


def rate_limit_body(model: str, retry_after_s: int | None) -> bytes:
    """The 429 body of a requests-per-minute limit (``None``: the body names no wait either)."""
    wait = "later" if retry_after_s is None else f"in {retry_after_s}s"
    return error_body(
        f"Rate limit reached for {model} on requests per min (RPM): Limit 500, Used 500, Requested 1. "
        f"Please try again {wait}.",
        "requests",
        "rate_limit_exceeded",
    )


def insufficient_quota_body() -> bytes:
    """OpenAI's 429 for an account without credit: ``type`` and ``code`` are ``insufficient_quota``."""
    return error_body(
        "Your account has no credit left for this request; check the plan and billing settings.",
        "insufficient_quota",
        "insufficient_quota",
    )


def payment_required_body() -> bytes:
    """OpenRouter's 402 shape: a numeric ``code`` and ``metadata`` instead of ``type``/``param``."""
    payload = {
        "error": {
            "message": "Insufficient credits. Top up the account to continue.",
            "code": 402,
            "metadata": {"limit_source": "account_credits"},
        }
    }
    return json.dumps(payload).encode("utf-8")


def server_error_body() -> bytes:
    """The 5xx body OpenAI sends on an internal error."""
    return error_body(
        "The server had an error while processing your request. Sorry about that!", "server_error", None
    )


def model_not_found_body(model: str) -> bytes:
    """The 404 ``model_not_found`` body."""
    return error_body(
        f"The model `{model}` does not exist or you do not have access to it.",
        "invalid_request_error",
        "model_not_found",
    )


def bad_request_body(message: str, param: str | None = None) -> bytes:
    """A 400 ``invalid_request_error`` body."""
    return error_body(message, "invalid_request_error", None, param)
