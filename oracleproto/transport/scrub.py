"""Secret scrubbing: nothing that authenticates a request is ever written.

Three layers, applied before an entry reaches the journal, a cassette or the index:
headers are filtered by an allow-nothing-secret policy, JSON request bodies lose their
``api_key``-like fields (the projection already drops them), and every secret value seen
in the live request — and every fragment of 12 or more characters of one — is replaced
wherever it appears in the entry (servers echo keys, or a prefix of them, in 401 messages
and headers; exception messages may contain URLs with keys), and so is every URL-encoded and
base64 form of such a secret and every 12-character fragment of one (``redact.secret_forms``).
The stored ``uri`` loses its userinfo and credential query values (``redact.redact_url``).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import functools
import json
from collections.abc import Set as AbstractSet
from typing import Any

from oracleproto.primitives.redact import (
    MIN_SECRET,
    redact_url,
    scrub_fragments,
    secret_forms,
    url_credentials,
)
from oracleproto.transport.entry import Entry
from oracleproto.transport.keys import TRANSPORT_ONLY_FIELDS

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
MIN_SECRET_LEN = MIN_SECRET


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


def collect_secrets(
    headers: list[tuple[str, str]], url: str, body: bytes, parsed_body: tuple[Any, bool] | None = None
) -> set[str]:
    """Every credential value carried by a request (headers, query, JSON body).

    ``parsed_body``: ``keys.parse_body(body)`` when the caller has it (the body is then not parsed again).
    """
    found: set[str] = set()
    for name, value in headers:
        if name.lower() in SECRET_HEADERS:
            found.add(value)
            scheme, _, token = value.partition(" ")
            if token and scheme.lower() in {"bearer", "basic", "token"}:
                found.add(token)
            if token and scheme.lower() == "basic":
                found.update(_basic_credentials(token))
    # httpx keeps a base URL's userinfo in the request URL (and sends it as Basic auth).
    found.update(url_credentials(url))
    if parsed_body is not None:
        if parsed_body[1]:  # the JSON body as parsed (``parse_body`` fails exactly as json.loads does)
            _body_secrets(parsed_body[0], found)
    elif body:
        with contextlib.suppress(UnicodeDecodeError, json.JSONDecodeError):
            _body_secrets(json.loads(body), found)
    return {s for s in found if len(s) >= MIN_SECRET_LEN}


def _basic_credentials(token: str) -> set[str]:
    """``user:password``, ``user`` and ``password`` from a Basic token (empty when undecodable)."""
    try:
        pair = base64.b64decode(token.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return set()
    user, _, password = pair.partition(":")
    return {pair, user, password}


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
    """The URL as stored: userinfo and credential query values replaced by ``[REDACTED]``.

    Only the stored ``uri`` changes; the key projection never held these parts (``host`` is
    the bare host name and ``query`` drops credential parameters), so keys are unaffected.
    """
    return redact_url(url)


def redact_value(value: Any, secrets: AbstractSet[str]) -> Any:
    """``value`` with every secret and every ≥ 12-char fragment of one replaced (str, bytes, lists, dicts)."""
    if not secrets:
        return value
    if isinstance(value, str | bytes):
        return scrub_fragments(value, secrets)
    if isinstance(value, dict):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_value(v, secrets) for v in value]
    return value


def stored_forms(secrets: set[str]) -> frozenset[str]:
    """Every form a secret can take in stored text (``redact.secret_forms``: raw, URL-encoded, base64)."""
    return _forms(frozenset(secrets))


@functools.lru_cache(maxsize=64)  # every request of a session carries the same few keys
def _forms(secrets: frozenset[str]) -> frozenset[str]:
    forms: set[str] = set()
    for secret in secrets:
        forms |= secret_forms(secret)
    return frozenset(forms)


def redact_entry(entry: Entry, secrets: set[str]) -> Entry:
    """``entry`` with every secret — and its URL-encoded and base64 forms, and every fragment of
    those of 12 or more characters — removed from its body, headers, uri, reason, request and exception."""
    if not secrets:
        return entry
    forms = stored_forms(secrets)
    entry.body = redact_value(entry.body, forms)
    entry.response_headers = redact_value(entry.response_headers, forms)
    entry.uri = redact_value(entry.uri, forms)
    entry.reason = redact_value(entry.reason, forms)
    entry.request_body = redact_value(entry.request_body, forms)
    if entry.exception is not None:
        entry.exception = redact_value(entry.exception, forms)
    return entry
