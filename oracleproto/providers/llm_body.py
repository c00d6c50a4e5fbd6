"""The main-LLM request body: which members a run sends, and in which order (profile §2).

Which members are present is a run setting (paper Table 10): ``max_tokens`` or
``max_completion_tokens`` per model, ``temperature``/``top_p`` unless the slug is a reasoning
model, ``tools`` when the step offers them, ``seed`` with ``LLM_SEND_SEED``. Their order is the
harness profile's ``llm_request.key_order``. ``check_llm_key_order`` answers, before any call,
whether a profile places every member a run can send, so a run is refused up front rather than
failing on its first request.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from oracleproto.context import current_call_context
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.profile.builtin import builtin_profile
from oracleproto.profile.model import HarnessProfile
from oracleproto.providers.body_order import ordered, unlisted, unlisted_error
from oracleproto.providers.types import Message, ToolSchema
from oracleproto.settings.model import LLMSettings

#: Where the LLM body order lives in a profile (named in errors).
KEY_ORDER_NAME = "llm_request.key_order"


def is_reasoning_slug(model: str, patterns: Sequence[str]) -> bool:
    """True when the lower-cased slug contains a reasoning pattern (those omit temperature/top_p)."""
    lowered = model.lower()
    return any(pattern.lower() in lowered for pattern in patterns if pattern)


def derive_seed(model: str, question_id: str, sample: int, step: int) -> int:
    """A stable 31-bit seed from the sample identity (same identity → same seed, across runs)."""
    digest = sha256_hex(canonical_json(["oracleproto-seed-v1", model, question_id, sample, step]))
    return int(digest[:8], 16) & 0x7FFFFFFF


def _token_key(settings: LLMSettings, model: str) -> str:
    return "max_completion_tokens" if model in settings.max_completion_tokens_models else "max_tokens"


def llm_body_keys(settings: LLMSettings, model: str, *, tools: bool = True) -> tuple[str, ...]:
    """Every body member a request for ``model`` can carry under ``settings`` (``tools``: E holds)."""
    keys = ["model", "messages"]
    if tools:
        keys.append("tools")
    if not is_reasoning_slug(model, settings.reasoning_model_patterns):
        keys += ["temperature", "top_p"]
    keys.append(_token_key(settings, model))
    if settings.send_seed:
        keys.append("seed")
    return tuple(keys)


def check_llm_key_order(
    profile: HarnessProfile, settings: LLMSettings, models: Iterable[str] | None = None, *, tools: bool = True
) -> None:
    """Raise ``ConfigError`` unless ``profile`` orders every member the run can send to any model.

    ``models`` defaults to ``settings.models``; ``tools`` says whether the run can offer the
    search tool at all (a run without search never sends ``tools``).
    """
    for model in models if models is not None else settings.models:
        missing = unlisted(llm_body_keys(settings, model, tools=tools), profile.llm_request.key_order)
        if missing:
            raise unlisted_error(
                missing, order_name=KEY_ORDER_NAME, profile_name=profile.name, why=f" to {model!r}"
            )


def build_chat_body(
    settings: LLMSettings,
    model: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSchema],
    profile: HarnessProfile | None = None,
) -> dict[str, Any]:
    """The request body for ``model``, keys in the profile's order (pure; no barrier check).

    Raises ``ConfigError`` naming the key and the profile when a member this call sends is not in
    ``llm_request.key_order``.
    """
    members: dict[str, Any] = {"model": model, "messages": list(messages)}
    if tools:
        members["tools"] = list(tools)
    if not is_reasoning_slug(model, settings.reasoning_model_patterns):
        members["temperature"] = settings.temperature
        members["top_p"] = settings.top_p
    members[_token_key(settings, model)] = settings.max_tokens
    if settings.send_seed:
        ctx = current_call_context()
        # Without a sample identity there is nothing stable to derive from; the transport
        # refuses sampled calls without identity anyway.
        if ctx is not None:
            members["seed"] = derive_seed(ctx.model, ctx.question_id, ctx.sample, ctx.step)
    chosen = profile if profile is not None else builtin_profile()
    return ordered(members, chosen.llm_request.key_order, order_name=KEY_ORDER_NAME, profile_name=chosen.name)
