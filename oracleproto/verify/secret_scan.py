"""Secret scan over every byte of a publication: anything key-like blocks an export.

Two layers: this module's own patterns, which know the keys this harness handles and its redacted
forms, and detect-secrets' plugins for every other service's credentials (``secret_plugins``).
Patterns are provider key shapes, generic credential assignments, URLs with a password in
their userinfo (``scheme://user:password@host``) and credential query parameters
(``?token=…``, ``&api-key=…``, any name ``redact.is_credential_param`` accepts). Redacted forms
(``[REDACTED]``, its percent-encoded form, the snapshot's ``abcd…<12 hex>``) are fine. Hits
carry the kind and the byte offset only — the matched text is never returned, so it cannot be
printed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from oracleproto.primitives.redact import is_credential_param
from oracleproto.verify.secret_plugins import find_credentials

_KEY_SHAPES: tuple[tuple[str, re.Pattern[bytes]], ...] = (
    ("OpenRouter key (sk-or-…)", re.compile(rb"sk-or-[A-Za-z0-9_-]{16,}")),
    ("OpenAI-style key (sk-…)", re.compile(rb"sk-(?!or-)[A-Za-z0-9_-]{16,}")),
    ("Tavily key (tvly-…)", re.compile(rb"tvly-[A-Za-z0-9_-]{16,}")),
    ("Groq key (gsk_…)", re.compile(rb"gsk_[A-Za-z0-9]{20,}")),
    ("Google API key (AIza…)", re.compile(rb"AIza[0-9A-Za-z_-]{30,}")),
    ("Hugging Face token (hf_…)", re.compile(rb"hf_[A-Za-z0-9]{20,}")),
    ("Bearer token", re.compile(rb"Bearer\s+(?!\[REDACTED\])[A-Za-z0-9._~+/-]{12,}=*")),
)
#: ``api_key": "value"``, ``api_key: value``, ``api_key=value`` (also api-key, apikey, api_keys).
_ASSIGNMENT = re.compile(rb"""(?i)["']?api[_-]?keys?["']?\s*[:=]\s*\[?\s*["']?(?P<value>[^"'\s,\]\}&]*)""")
#: Values an assignment may hold without being a secret.
_HARMLESS = re.compile(
    rb"^(|\[?REDACTED\]?|%5BREDACTED%5D|null|None|none|true|false|\*+|[^\s]{0,4}\xe2\x80\xa6[0-9a-f]{12}"
    rb"|\{[^\s]*\}|\$\{?[A-Z_]+\}?)$"
)
#: ``scheme://user:password@`` (the password group must be non-empty).
_URL_USERINFO = re.compile(rb"[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@'\"<>:]*:(?P<value>[^\s/?#@'\"<>]+)@")
#: ``?name=value`` / ``&name=value`` / ``#name=value`` inside a URL or query string.
_QUERY_PARAM = re.compile(rb"[?&#](?P<name>[A-Za-z0-9_.%-]{1,64})=(?P<value>[^&#\s'\"<>\\]*)")


@dataclass(frozen=True)
class SecretHit:
    """A key-like byte run: where it is and what it looks like (never the text itself)."""

    file: str
    offset: int
    kind: str

    def __str__(self) -> str:
        return f"{self.file}: byte offset {self.offset}: {self.kind}"


def scan_bytes(data: bytes, name: str) -> list[SecretHit]:
    """Every key-like run in ``data``, sorted by offset."""
    hits = [SecretHit(name, m.start(), kind) for kind, rx in _KEY_SHAPES for m in rx.finditer(data)]
    for match in _ASSIGNMENT.finditer(data):
        if not _HARMLESS.fullmatch(match.group("value")):
            hits.append(SecretHit(name, match.start("value"), "api_key assignment with a non-redacted value"))
    for match in _URL_USERINFO.finditer(data):
        if not _HARMLESS.fullmatch(match.group("value")):
            hits.append(SecretHit(name, match.start("value"), "URL with a password in its userinfo"))
    reported = {h.offset for h in hits}  # ``?api_key=`` is already an assignment hit
    for match in _QUERY_PARAM.finditer(data):
        param = match.group("name").decode("ascii", errors="replace")
        if match.start("value") in reported:
            continue
        if is_credential_param(param) and not _HARMLESS.fullmatch(match.group("value")):
            kind = f"credential query parameter {param!r} in a URL"
            hits.append(SecretHit(name, match.start("value"), kind))
    # Other services' credentials (AWS, GitHub, Slack, …): detect-secrets' plugins, tuned for runs.
    taken = {h.offset for h in hits}
    hits.extend(SecretHit(name, f.offset, f.kind) for f in find_credentials(data) if f.offset not in taken)
    return sorted(set(hits), key=lambda h: (h.offset, h.kind))


def scan_tree(root: Path, files: list[str]) -> list[SecretHit]:
    """Scan the listed files (relative POSIX paths under ``root``)."""
    hits: list[SecretHit] = []
    for rel in files:
        hits.extend(scan_bytes((root / rel).read_bytes(), rel))
    return hits
