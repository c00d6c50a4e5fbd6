"""Credential masking shared by the capture writer and the body comparison.

Tavily clients put ``api_key`` in the JSON body; OpenAI clients send ``Authorization``. A capture
must never hold either, and two harnesses with different keys must still compare byte-identical,
so both sides go through the same rewrite. The body rewrite is minimal: only the string token of
each top-level ``api_key`` member becomes ``"<redacted>"``; every other byte stays as it was (the
point of a conformance check is the bytes).
"""

from __future__ import annotations

import json

REDACTED = "<redacted>"
_MARKER = json.dumps(REDACTED)
#: strict=False: a raw control character inside an earlier string must not stop the scan (and
#: leave a later key unmasked).
_DECODER = json.JSONDecoder(strict=False)
_WHITESPACE = " \t\n\r"
#: Headers whose whole value is a credential; the scheme of the two ``*authorization`` is kept.
_SCHEME_HEADERS = frozenset({"authorization", "proxy-authorization"})
_SECRET_HEADERS = frozenset({"api-key", "x-api-key", "cookie", "x-goog-api-key"})


def _skip(text: str, index: int) -> int:
    while index < len(text) and text[index] in _WHITESPACE:
        index += 1
    return index


def _api_key_spans(text: str) -> list[tuple[int, int]]:
    """Where the string values of top-level ``api_key`` members lie (stops at the first syntax error).

    A body that breaks off (truncated, hostile) keeps the spans found before the break: whatever
    could be read as a key is still masked.
    """
    spans: list[tuple[int, int]] = []
    index = _skip(text, 0)
    if not text.startswith("{", index):
        return spans
    index = _skip(text, index + 1)
    try:
        while text.startswith('"', index):
            name, index = _DECODER.raw_decode(text, index)
            index = _skip(text, index)
            if not text.startswith(":", index):
                break
            start = _skip(text, index + 1)
            value, index = _DECODER.raw_decode(text, start)
            if name == "api_key" and isinstance(value, str):
                spans.append((start, index))
            index = _skip(text, index)
            if not text.startswith(",", index):
                break
            index = _skip(text, index + 1)
    except (ValueError, RecursionError):
        pass
    return spans


def mask_api_key(body: bytes) -> bytes:
    """``body`` with the value of every top-level ``api_key`` string member replaced by ``"<redacted>"``."""
    # A key spelled without escapes contains these bytes; one spelled with \\u escapes contains a
    # backslash-u. Bodies with neither (most LLM bodies are large) are returned untouched, unparsed.
    if b"api_key" not in body and b"\\u" not in body:
        return body
    # surrogateescape: invalid UTF-8 survives the round trip byte for byte.
    text = body.decode("utf-8", "surrogateescape")
    spans = _api_key_spans(text)
    if not spans:
        return body
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts.extend((text[last:start], _MARKER))
        last = end
    parts.append(text[last:])
    return "".join(parts).encode("utf-8", "surrogateescape")


def redact_header(name: str, value: str) -> str:
    """The value to store for a request header: credentials masked, everything else as sent."""
    lowered = name.strip().lower()
    if lowered in _SCHEME_HEADERS:
        scheme, sep, _ = value.strip().partition(" ")
        return f"{scheme} {REDACTED}" if sep else REDACTED
    if lowered in _SECRET_HEADERS:
        return REDACTED
    return value
