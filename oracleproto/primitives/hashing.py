"""Canonical JSON and the hash helpers shared by the hash chain and the cache keys."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any


def _not_serializable(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


#: What the fast path is checked against when the module loads: keys to sort, nesting, every JSON
#: type, non-ASCII, escapes and the non-finite floats json writes as bare words.
_PROBE: Any = {"b": [1, -2.5, None, True, False, 'é\n"\u2028\x00'], "a": {"z": float("inf"), "y": []}}


def _usable(make: Any, escape: Any) -> bool:
    """True when ``make`` (``_json.make_encoder``, private to CPython) still works as called below.

    Its positional signature is not a public API: a Python where it changed, or behaves otherwise,
    falls back to ``json.dumps`` (same text, no fast path) instead of failing or writing other bytes.
    """
    try:
        encoder = make({}, _not_serializable, escape, None, ":", ",", True, False, True)
        text = "".join(encoder(_PROBE, 0))
    except Exception:
        return False
    return text == json.dumps(_PROBE, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


try:  # json's C encoder and escaper, as json.dumps runs them (CPython)
    import _json

    encode_basestring: Any = _json.encode_basestring
    make_encoder: Any = _json.make_encoder if _usable(_json.make_encoder, encode_basestring) else None
except ImportError:  # another Python: the plain json paths below (same text, no fast path)
    encode_basestring = json.encoder.py_encode_basestring
    make_encoder = None


def canonical_json(value: Any, default: Callable[[Any], Any] | None = None) -> str:
    """Serialise ``value`` as compact JSON with sorted keys, non-ASCII kept (``default``: as json's)."""
    if make_encoder is None:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=default)
    # The C encoder json.dumps builds for these arguments (circular check, ":" and ",", sorted keys,
    # no skipkeys, NaN allowed), without the JSONEncoder object around it: ≈ 2 µs less per call,
    # and the recorder makes several calls per request. Same text (tested against json.dumps).
    encoder = make_encoder(
        {}, default or _not_serializable, encode_basestring, None, ":", ",", True, False, True
    )
    return "".join(encoder(value, 0))


#: Strings shorter than this go straight to json's C escaper: below it the checks of the fast
#: path cost more than they save (measured on the simulator's prompts, 1–20 KB bodies).
LONG_STRING = 4096
#: Every byte except the control characters json writes as ``\\uXXXX``, ``\\b`` or ``\\f``: deleting
#: these from a string's bytes leaves nothing exactly when its escapes are ``\\\\ \\" \\n \\r \\t`` only.
_PLAIN_OR_NAMED = bytes(b for b in range(256) if b >= 0x20 or b in (0x09, 0x0A, 0x0D))


def json_string(value: str) -> str:
    """``value`` as a JSON string literal, the text of ``json.dumps(value, ensure_ascii=False)``.

    json's C escaper inspects every character twice (≈ 2.3 ns each); a long ASCII string whose
    only escapes are the backslash, the quote, LF, CR and TAB — prompts, pages, JSON texts — is
    escaped by a few ``str.replace`` instead (memchr speed when the character is absent), about
    three times faster. Anything else (non-ASCII, other control characters) goes to json.
    """
    if len(value) < LONG_STRING or not value.isascii():
        return str(encode_basestring(value))
    if value.encode("ascii").translate(None, _PLAIN_OR_NAMED):
        return str(encode_basestring(value))
    # ``in`` runs at memchr speed; ``replace`` of an absent character still walks the string.
    if "\\" in value:
        value = value.replace("\\", "\\\\")
    if '"' in value:
        value = value.replace('"', '\\"')
    if "\n" in value:
        value = value.replace("\n", "\\n")
    if "\r" in value:
        value = value.replace("\r", "\\r")
    if "\t" in value:
        value = value.replace("\t", "\\t")
    return '"' + value + '"'


def canonical_json_long_text(value: Any) -> str:
    """:func:`canonical_json`, faster for values whose bytes are mostly long strings (prompts, pages).

    The same C encoder as ``json.dumps`` with every string escaped by :func:`json_string`: one
    Python call per string, so a value of many short strings is slower this way — use it when
    the text is known to be a few long strings (``prepared.py`` looks at the request bytes).
    """
    if make_encoder is None:
        return canonical_json(value)
    # The arguments are json.dumps's for canonical_json: circular check, default raising
    # TypeError, no indent, ":" and ",", sorted keys, no skipkeys, NaN allowed.
    encoder = make_encoder({}, _not_serializable, json_string, None, ":", ",", True, False, True)
    return "".join(encoder(value, 0))


def sha256_hex(data: bytes | str) -> str:
    """Full sha256 hex digest of bytes, or of a string encoded as UTF-8.

    A string holding a lone surrogate raises ``UnicodeEncodeError``: callers that may meet one
    (transport keys) rely on it to escape the text first.
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def sha256_16(text: str) -> str:
    """First 16 hex chars of sha256(text): the protocol fingerprint of run-layout.md."""
    return sha256_hex(text)[:16]


def redact_secret(secret: str) -> str:
    """The paper's key redaction: first 4 characters + sha256-12 of the whole key."""
    return f"{secret[:4]}…{sha256_hex(secret)[:12]}"
