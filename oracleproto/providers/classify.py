"""Error classification (paper Table 14): every failure maps to exactly one ``ErrorKind``.

The matching order is the paper's: transport errors and timeouts → network; 401/403 → auth;
429 → rate_limit; 5xx → server_5xx; 400 whose body mentions a policy needle →
content_policy, checked before the generic 400 → bad_request; anything else → unknown.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any

import httpx

from oracleproto.errors import CallFailedError, ErrorKind

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
)

# "case-sensitive" in a plain validation message is not a policy rejection; remove those
# phrases before looking for the "sensitive" needle.
_NOT_POLICY = ("caseinsensitive", "casesensitive")
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


def _body_text(body: str | bytes | None) -> str:
    if body is None:
        return ""
    if isinstance(body, bytes):
        return body.decode("utf-8", errors="replace")
    return body


def classify_status(status: int, body: str | bytes | None = None) -> ErrorKind:
    """Classify an HTTP status code and its body (the HTTP rows of Table 14)."""
    if status in (401, 403):
        return ErrorKind.AUTH
    if status == 429:
        return ErrorKind.RATE_LIMIT
    if 500 <= status <= 599:
        return ErrorKind.SERVER_5XX
    if status == 400:
        return ErrorKind.CONTENT_POLICY if mentions_policy(_body_text(body)) else ErrorKind.BAD_REQUEST
    return ErrorKind.UNKNOWN


def classify_error_object(error: Any) -> ErrorKind:
    """Classify an ``error`` object found inside a 200 body (OpenRouter reports failures so)."""
    text = json.dumps(error, ensure_ascii=False, default=str)
    code = error.get("code") if isinstance(error, Mapping) else None
    status: int | None = None
    if isinstance(code, int) and not isinstance(code, bool):
        status = code
    elif isinstance(code, str) and code.isdigit():
        status = int(code)
    if status is not None:
        return classify_status(status, text)
    # A symbolic code ("invalid_api_key", "content_filter") with no HTTP status.
    if isinstance(code, str) and code.lower() in {"invalid_api_key", "unauthorized", "forbidden"}:
        return ErrorKind.AUTH
    if isinstance(code, str) and code.lower() in {"rate_limit_exceeded", "rate_limited"}:
        return ErrorKind.RATE_LIMIT
    return ErrorKind.CONTENT_POLICY if mentions_policy(text) else ErrorKind.UNKNOWN


def classify_error(exc: BaseException) -> ErrorKind:
    """Classify a failure: httpx errors, ``HTTPStatusError`` with its response, timeouts, anything."""
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
