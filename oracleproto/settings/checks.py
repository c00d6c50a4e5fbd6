"""Startup checks of base URLs and API keys, so a broken setup fails before the first call.

Without them, ``LLM_BASE_URL='not a url'`` or a key with a line break in it made every call fail
with a network error, and the run stored every sample as failed and exited 0. Messages name the
variable and the problem, never the value: a base URL may carry credentials, and no part of a key
is ever shown.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pydantic import SecretStr

from oracleproto.primitives.hashing import redact_secret
from oracleproto.primitives.redact import redact_url, scrub_text

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


#: Substrings that mark a key as a template value rather than a real key.
_PLACEHOLDER_MARKERS = ("changeme", "change-me", "placeholder", "your", "replace", "xxx", "...", "<")


def keys_in_urls(keys: Mapping[str, SecretStr | None], urls: Mapping[str, str | None]) -> list[str]:
    """A configured key inside a base URL would be stored with every request (path, cassette uri)."""
    problems = []
    for url_name, url in urls.items():
        for key_name, key in keys.items():
            value = key.get_secret_value().strip() if key is not None else ""
            if url and len(value) >= 8 and value in url:
                problems.append(
                    f"{url_name} contains the value of {key_name}; remove the key from the URL "
                    f"({redact_url(url, [value])}) and pass it only through {key_name.split('[')[0]}"
                )
    return problems


def check_key(problems: list[str], name: str, key: SecretStr | None) -> None:
    """Append what makes ``key`` unusable for a live run (empty, unsendable, a placeholder)."""
    if key is None or not key.get_secret_value().strip():
        problems.append(f"{name} is empty; export it or put it in .env")
        return
    unsendable = key_problem(name, key.get_secret_value())
    if unsendable is not None:
        problems.append(unsendable)
        return
    value = key.get_secret_value().strip().lower()
    if any(marker in value for marker in _PLACEHOLDER_MARKERS) or len(value) < 8:
        problems.append(f"{name} looks like a placeholder ({redact_secret(value)}); set the real key")


def redact_snapshot(value: Any) -> Any:
    """A settings dump fit for the config snapshot: keys reduced, URL credentials dropped."""
    if isinstance(value, str) and "://" in value:
        # Base URLs may carry ``user:password@`` or ``?api_key=``: keep the URL, drop those parts.
        return redact_url(value)
    if isinstance(value, SecretStr):
        return redact_secret(value.get_secret_value())
    if isinstance(value, Mapping):
        return {str(k): redact_snapshot(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        if value and all(isinstance(v, SecretStr) for v in value):
            # One redaction for the whole pool: the snapshot must not reveal the key count.
            return redact_secret(",".join(v.get_secret_value() for v in value))
        return [redact_snapshot(v) for v in value]
    if isinstance(value, Path):
        return value.as_posix()
    return value


def error_line(err: Any, secret_names: frozenset[str]) -> str:
    """One validation problem, never echoing a secret (keys are not shown; URLs are redacted)."""
    where = ".".join(str(p) for p in err["loc"])
    raw = err.get("input")
    msg = str(err["msg"])
    if str(err["loc"][0]).lower() in secret_names:
        # ``raw`` may be the key itself: neither it nor any fragment of it may be printed.
        text = raw if isinstance(raw, str) else ""
        secrets = [text, *text.split(",")]
        return f"  - {where}: {scrub_text(msg, secrets)} (value not shown: it is a secret)"
    shown = scrub_text(repr(raw)) if isinstance(raw, str) else repr(raw)
    return f"  - {where}: {scrub_text(msg)} (got {shown})"
