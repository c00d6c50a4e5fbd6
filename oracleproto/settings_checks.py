"""Startup checks of base URLs and API keys, so a broken setup fails before the first call.

Without them, ``LLM_BASE_URL='not a url'`` or a key with a line break in it made every call fail
with a network error, and the run stored every sample as failed and exited 0. Messages name the
variable and the problem, never the value: a base URL may carry credentials, and no part of a key
is ever shown.
"""

from __future__ import annotations

import unicodedata
from urllib.parse import urlsplit

_EXAMPLE_URL = "https://openrouter.ai/api/v1"


_KINDS = (
    "a line break (CR/LF)",
    "a tab",
    "a space",
    "a control or invisible character",
    "a non-ASCII character",
)


def _kind(ch: str) -> str | None:
    """Which of ``_KINDS`` a character is, None for printable ASCII."""
    if ch in "\r\n":
        return _KINDS[0]
    if ch == "\t":
        return _KINDS[1]
    if ch.isspace():
        return _KINDS[2]
    if unicodedata.category(ch).startswith("C"):
        return _KINDS[3]
    if ord(ch) > 0x7E:
        return _KINDS[4]
    return None


def _character_kinds(value: str) -> list[str]:
    """What a value holds that an HTTP header or URL cannot carry, in a fixed order."""
    found = {_kind(ch) for ch in value}
    return [kind for kind in _KINDS if kind in found]


def url_problem(name: str, value: str) -> str | None:
    """Why ``value`` is not an http(s) base URL with a host, or None (the value is never echoed)."""
    fix = f"set it to the provider's API base URL, e.g. {_EXAMPLE_URL}"
    # Non-ASCII is left to the URL parser: an internationalised host name is a valid host.
    kinds = [kind for kind in _character_kinds(value) if kind != _KINDS[4]]
    if kinds:
        return f"{name} is not a URL: it contains {' and '.join(kinds)}; {fix}"
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        return f"{name} is not a valid URL (its host or port cannot be read); {fix}"
    if not parts.scheme or not value.lower().startswith(f"{parts.scheme.lower()}://"):
        return f"{name} is not a URL: it does not start with http:// or https://; {fix}"
    if parts.scheme.lower() not in ("http", "https"):
        return f"{name} must be an http:// or https:// URL (another scheme is set); {fix}"
    if not parts.hostname:
        return f"{name} has no host; {fix}"
    del port  # parsed only to reject an unreadable port above
    return None


def key_problem(name: str, value: str) -> str | None:
    """Why ``value`` cannot be sent as a key (whitespace, control or non-ASCII characters), or None.

    The message says which kind of character and whether it sits at an edge (a key copied with
    its trailing newline), never the key or any part of it.
    """
    kinds = _character_kinds(value)
    if not kinds:
        return None
    stripped = value.strip()
    where = "around it" if stripped and not _character_kinds(stripped) else "in it"
    return (
        f"{name} has {' and '.join(kinds)} {where}; a key is sent in an HTTP header and must be printable "
        "ASCII without spaces — copy the key again (its value is not shown)"
    )
