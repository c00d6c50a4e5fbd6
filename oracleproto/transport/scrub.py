"""Secret scrubbing: nothing that authenticates a request is ever written.

Three layers, applied before an entry reaches the journal, a cassette or the index:
headers are filtered by an allow-nothing-secret policy, JSON request bodies lose their
``api_key``-like fields (the projection already drops them), and every secret value seen
in the live request is replaced wherever it appears in the entry (servers echo keys in
401 messages; exception messages may contain URLs with keys).
"""

from __future__ import annotations

import contextlib
import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from oracleproto.transport.keys import SECRET_QUERY_PARAMS, TRANSPORT_ONLY_FIELDS

REDACTED = "[REDACTED]"
#: Response headers never stored: credentials, cookies, and encodings undone by decompression.
DROPPED_RESPONSE_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "api-key",
        "x-api-key",
        "cookie",
        "set-cookie",
        "content-encoding",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "date",
        "openai-organization",
        "openai-project",
    }
)
#: Request headers that are stored (for vcrpy and humans); everything else, including every
#: credential-bearing header, is left out rather than masked.
KEPT_REQUEST_HEADERS = frozenset({"content-type", "accept"})
#: Request headers whose values are secrets to hunt for elsewhere in the entry.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "api-key", "x-api-key", "cookie"})
#: Secrets shorter than this are not replaced globally (they would hit ordinary text).
MIN_SECRET_LEN = 8


def _body_secrets(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            if k.lower() in TRANSPORT_ONLY_FIELDS and isinstance(v, str):
                out.add(v)
            else:
                _body_secrets(v, out)
    elif isinstance(value, list):
        for item in value:
            _body_secrets(item, out)


def collect_secrets(headers: list[tuple[str, str]], url: str, body: bytes) -> set[str]:
    """Every credential value carried by a request (headers, query, JSON body)."""
    found: set[str] = set()
    for name, value in headers:
        if name.lower() in SECRET_HEADERS:
            found.add(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in {"bearer", "basic", "token"}:
                found.add(token)
    for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
        if name.lower() in SECRET_QUERY_PARAMS:
            found.add(value)
    if body:
        with contextlib.suppress(UnicodeDecodeError, json.JSONDecodeError):
            _body_secrets(json.loads(body), found)
    return {s for s in found if len(s) >= MIN_SECRET_LEN}


def keep_response_headers(headers: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Response headers worth keeping, lower-cased, values in arrival order, names sorted."""
    kept: dict[str, list[str]] = {}
    for name, value in headers:
        low = name.lower()
        if low not in DROPPED_RESPONSE_HEADERS:
            kept.setdefault(low, []).append(value)
    return dict(sorted(kept.items()))


def keep_request_headers(headers: list[tuple[str, str]]) -> dict[str, list[str]]:
    """The few request headers stored with an entry."""
    kept: dict[str, list[str]] = {}
    for name, value in headers:
        low = name.lower()
        if low in KEPT_REQUEST_HEADERS:
            kept.setdefault(low, []).append(value)
    return dict(sorted(kept.items()))


def public_uri(url: str) -> str:
    """The URL with credential query parameters replaced by ``[REDACTED]``."""
    parts = urlsplit(url)
    if not parts.query:
        return url
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    query = "&".join(f"{k}={REDACTED if k.lower() in SECRET_QUERY_PARAMS else v}" for k, v in pairs)
    return parts._replace(query=query).geturl()


def redact_value(value: Any, secrets: set[str]) -> Any:
    """``value`` with every occurrence of every secret replaced (strings, lists, dicts, bytes)."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, bytes):
        for secret in secrets:
            raw = secret.encode("utf-8")
            if raw in value:
                value = value.replace(raw, REDACTED.encode("utf-8"))
        return value
    if isinstance(value, dict):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, secrets) for v in value]
    return value
