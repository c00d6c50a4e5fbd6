"""Error classification (paper Table 14): every failure maps to exactly one ``ErrorKind``.

The matching order is the paper's: transport errors and timeouts → network; 401/403 → auth;
429 → rate_limit; 5xx → server_5xx; 400 whose body mentions a policy needle (English or Chinese:
Zhipu and other gateways refuse in Chinese only) or carries a policy code (Zhipu 1301) →
content_policy, checked before the generic 400 → bad_request; anything else → unknown.

Our extension (docs/design/reliability.md, "Quota"): before any of the 4xx rows, HTTP 402, Tavily's 432/433
and a 4xx (other than 401) whose body says the credit, balance or plan limit is exhausted →
``quota``. Those never clear within a run, so retrying them as rate limits only burns backoff.

Two more readings (issue 28): a reply the transport refused (its decoded body over the limit, or
undecodable: ``transport.live_body``) is a provider defect, ``unknown``, not a network failure; and
:func:`is_model_not_found` recognises a provider saying the requested model does not exist, which
the channels turn into a configuration error that stops the run (its Table 14 kind stays ``unknown``,
which is what a replay of an earlier recording of such a reply writes).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any

import httpx

from oracleproto.errors import CallFailedError, ErrorKind
from oracleproto.transport.live_body import REFUSED_REPLY

#: The paper's content-policy needles plus close variants seen on real providers
#: (Azure's ``ResponsibleAIPolicyViolation``, OpenAI/OpenRouter ``moderation``). Matching is
#: done on a squeezed lower-case form, so ``content-policy``, ``Content Policy`` and
#: ``contentpolicy`` all hit ``content_policy``.
POLICY_NEEDLES: tuple[str, ...] = (
    "content_policy",
    "content_filter",
    "safety",
    "data_inspection_failed",
    "inappropriate content",
    "sensitive",
    "responsible ai",
    "moderation",
    "content exists risk",  # DeepSeek's HTTP 400 refusal, English only
    "敏感",  # "sensitive": Zhipu 1301 and other Chinese gateways answer in Chinese only
    "不安全",  # "unsafe"
    "违规内容",  # "non-compliant content"
    "内容安全",  # "content safety" (review failed)
)

# "case-sensitive" in a plain validation message is not a policy rejection; remove those
# phrases (and the Chinese "大小写敏感") before looking for the "sensitive" needles.
_NOT_POLICY = ("caseinsensitive", "casesensitive", "大小写敏感")
#: Provider codes of a content-policy refusal inside an error object: Zhipu 1301 ("the input or
#: generated content may be unsafe or sensitive"), whatever language its message is in.
POLICY_CODES = frozenset({1301})
_SQUEEZE = re.compile(r"[\s_\-]+")


def _squeeze(text: str) -> str:
    return _SQUEEZE.sub("", text.lower())


_SQUEEZED_NEEDLES = tuple(_squeeze(n) for n in POLICY_NEEDLES)


def mentions_policy(body: str) -> bool:
    """True when ``body`` mentions a content-policy needle (case and separator insensitive)."""
    text = _squeeze(body)
    for phrase in _NOT_POLICY:
        text = text.replace(phrase, "")
    return any(needle in text for needle in _SQUEEZED_NEEDLES)


#: Statuses that always mean "credit or plan limit exhausted": 402 Payment Required (OpenRouter,
#: DeepSeek), Tavily's 432 (key or plan limit) and 433 (pay-as-you-go limit).
QUOTA_STATUSES = frozenset({402, 432, 433})
#: Body phrases of an exhausted credit/balance/plan, matched on the squeezed lower-case body.
#: Deliberately specific: a per-minute quota ("Quota exceeded for quota metric … per minute") and
#: OpenAI's old rate-limit text ("… add a payment method … /account/billing") are rate limits.
QUOTA_NEEDLES: tuple[str, ...] = (
    "insufficient_quota",  # OpenAI: type and code of the 429 "You exceeded your current quota"
    "exceeded your current quota",
    "insufficient balance",  # MiniMax "insufficient balance (1008)", DeepSeek 402
    "insufficient_balance",
    "balance is insufficient",  # SiliconFlow 403 "Your paid balance is insufficient"
    "insufficient credits",  # OpenRouter 402
    "insufficient funds",
    "more credits are required",  # OpenRouter 402 with a per-key credit limit
    "requires more credits",
    "credit balance is too low",  # Anthropic 400
    "billing_hard_limit_reached",
    "exceeds your plan",  # Tavily 432
    "pay-as-you-go limit",  # Tavily 433
    "no resource package",  # Zhipu 1113 (English text)
    "余额不足",  # Zhipu 1113, many Chinese gateways: "balance insufficient"
)
_SQUEEZED_QUOTA = tuple(_squeeze(n) for n in QUOTA_NEEDLES)
#: Provider-specific numeric codes of an exhausted balance inside an error object:
#: Zhipu 1113 ("insufficient balance or no resource package"), MiniMax 1008 ("insufficient balance").
QUOTA_CODES = frozenset({1113, 1008})


def mentions_quota(body: str) -> bool:
    """True when ``body`` says the credit, balance or plan limit is exhausted."""
    text = _squeeze(body)
    return any(needle in text for needle in _SQUEEZED_QUOTA)


def _body_text(body: str | bytes | None) -> str:
    if body is None:
        return ""
    if isinstance(body, bytes):
        return body.decode("utf-8", errors="replace")
    return body


def classify_status(status: int, body: str | bytes | None = None) -> ErrorKind:
    """Classify an HTTP status code and its body (the HTTP rows of Table 14, plus ``quota``)."""
    if status in QUOTA_STATUSES:
        return ErrorKind.QUOTA
    if 400 <= status < 500 and status != 401 and _is_quota_body(_body_text(body)):
        return ErrorKind.QUOTA
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if 500 <= status <= 599:
        return ErrorKind.SERVER_5XX
    if status == 400:
        return ErrorKind.CONTENT_POLICY if _is_policy_body(_body_text(body)) else ErrorKind.BAD_REQUEST
    return ErrorKind.UNKNOWN


def _numeric_code(code: Any) -> int | None:
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    if isinstance(code, str) and code.isdigit():
        return int(code)
    return None


def _is_quota_body(text: str) -> bool:
    """A quota needle, or a JSON error object whose code is a known balance code (Zhipu, MiniMax)."""
    if not text:
        return False
    if mentions_quota(text):
        return True
    if not any(str(code) in text for code in QUOTA_CODES):
        return False  # cheap guard: only parse bodies that could hold such a code
    try:
        data = json.loads(text)
    except ValueError:
        return False
    return _object_has_quota_code(data)


def _object_has_quota_code(data: Any) -> bool:
    if not isinstance(data, Mapping):
        return False
    candidates = [data.get("error"), data.get("base_resp"), data]
    for obj in candidates:
        if isinstance(obj, Mapping):
            for field in ("code", "status_code"):
                if _numeric_code(obj.get(field)) in QUOTA_CODES:
                    return True
    return False


def _is_policy_body(text: str) -> bool:
    """A policy needle, or a JSON error object whose code is a known policy code (Zhipu 1301)."""
    if mentions_policy(text):
        return True
    if not any(str(code) in text for code in POLICY_CODES):
        return False  # cheap guard, as for the quota codes
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return False
    error = data.get("error") if isinstance(data, Mapping) else None
    return isinstance(error, Mapping) and _numeric_code(error.get("code")) in POLICY_CODES


def classify_error_object(error: Any) -> ErrorKind:
    """Classify an ``error`` object found inside a 200 body (OpenRouter reports failures so)."""
    text = json.dumps(error, ensure_ascii=False, default=str)
    code = error.get("code") if isinstance(error, Mapping) else None
    status = _numeric_code(code)
    if status in QUOTA_CODES or mentions_quota(text):
        return ErrorKind.QUOTA
    if status in POLICY_CODES:
        return ErrorKind.CONTENT_POLICY
    if status is not None:
        return classify_status(status, text)
    # A symbolic code ("invalid_api_key", "content_filter") with no HTTP status.
    if isinstance(code, str) and code.lower() in {"invalid_api_key", "unauthorized", "forbidden"}:
        return ErrorKind.AUTH
    if isinstance(code, str) and code.lower() in {"insufficient_quota", "insufficient_credits"}:
        return ErrorKind.QUOTA
    if isinstance(code, str) and code.lower() in {"rate_limit_exceeded", "rate_limited"}:
        return ErrorKind.RATE_LIMIT
    return ErrorKind.CONTENT_POLICY if mentions_policy(text) else ErrorKind.UNKNOWN


def is_refused_reply(exc: BaseException) -> bool:
    """True for a reply the transport refused to record (decoded body too large, or undecodable)."""
    return isinstance(exc, httpx.RemoteProtocolError) and str(exc).startswith(REFUSED_REPLY)


#: Error codes of "no such model" (OpenAI, Groq: ``model_not_found``; Together: ``model_not_available``).
MODEL_NOT_FOUND_CODES = frozenset({"model_not_found", "model_not_available", "modelnotfound"})
#: Phrases of a 404 that, next to the word "model", mean the model does not exist (OpenAI, vLLM
#: "does not exist", Ollama "not found", Together "unable to access", Anthropic "not_found_error").
_MISSING_MODEL_404 = (
    "does not exist",
    "not exist",
    "not found",
    "not_found",
    "notfound",
    "unable to access",
)
#: Phrases of a 400 that say the model name is not one the provider knows (OpenRouter, DeepSeek, Mistral).
_MISSING_MODEL_400 = ("is not a valid model", "model not exist", "invalid model", "unknown model")


def _error_code(text: str) -> str | None:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    error = data.get("error") if isinstance(data, Mapping) else None
    code = error.get("code") if isinstance(error, Mapping) else None
    return code.lower() if isinstance(code, str) else None


def is_model_not_found(status: int, body: str | bytes | None) -> bool:
    """True when an HTTP ``status`` and ``body`` say the requested model does not exist (for this key).

    A 404 (or 400) that names the model: a ``model_not_found`` code, or "model" next to one of the
    phrases providers use. A 404 that does not speak of a model (a wrong base URL, a proxy's page)
    is not one: it stays ``unknown`` and the circuit breaker judges it.
    """
    if status not in (400, 404):
        return False
    text = _body_text(body)
    if _error_code(text) in MODEL_NOT_FOUND_CODES:
        return True
    lowered = " ".join(text.lower().split())
    if status == 404 and "no endpoints found for" in lowered:
        return True  # OpenRouter: "No endpoints found for <slug>." (it does not say "model")
    if "model" not in lowered:
        return False
    phrases = _MISSING_MODEL_404 if status == 404 else _MISSING_MODEL_400
    return any(phrase in lowered for phrase in phrases)


def is_model_not_found_object(error: Any) -> bool:
    """True for an ``error`` object inside a 200 body that says the model does not exist."""
    if not isinstance(error, Mapping):
        return False
    code = error.get("code")
    if isinstance(code, str) and code.lower() in MODEL_NOT_FOUND_CODES:
        return True
    status = _numeric_code(code)
    return status in (400, 404) and is_model_not_found(status, json.dumps(error, default=str))


def provider_message(body: str | bytes | None, limit: int = 300) -> str:
    """What a provider said in an error body: ``error.message`` (or ``message``/``detail``), else the text."""
    text = _body_text(body)
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        data = None
    if isinstance(data, Mapping):
        error = data.get("error")
        for source in (error, data):
            if isinstance(source, Mapping):
                for name in ("message", "detail"):
                    value = source.get(name)
                    if isinstance(value, str) and value.strip():
                        return " ".join(value.split())[:limit]
    return " ".join(text.split())[:limit]


def classify_error(exc: BaseException) -> ErrorKind:
    """Classify a failure: httpx errors, ``HTTPStatusError`` with its response, timeouts, anything."""
    if is_refused_reply(exc):
        return ErrorKind.UNKNOWN
    if isinstance(exc, httpx.TransportError | asyncio.TimeoutError | TimeoutError):
        return ErrorKind.NETWORK
    if isinstance(exc, httpx.HTTPStatusError):
        response = exc.response
        try:
            body: str | None = response.text
        except httpx.ResponseNotRead:
            # A streamed response whose body was never read: classify on the status alone.
            body = None
        return classify_status(response.status_code, body)
    if isinstance(exc, CallFailedError):
        return exc.kind
    return ErrorKind.UNKNOWN
