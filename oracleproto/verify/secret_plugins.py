"""Other services' credentials in a publication, found with detect-secrets' maintained plugins.

``secret_scan`` knows the shapes of the keys *this* harness handles (OpenAI, OpenRouter, Tavily,
…). A bundle can also carry someone else's credential — an AWS key pasted into a question, a
GitHub token in a search result, a Slack webhook in a model's output — so the export gate also
runs detect-secrets' provider plugins (AWS, Azure storage, GitHub, GitLab, Slack, Stripe, SendGrid,
Twilio, Discord, Telegram, Mailchimp, npm, PyPI, Square, JWT, private keys), and a generic rule
for high-entropy values assigned to a credential-named key.

How the plugins are used, and why:

- Each plugin's own ``denylist`` regexes are run over the whole file (bytes read as Latin-1, so a
  character offset is the byte offset the message names): detect-secrets' line scanner returns
  values without positions, and our messages must say where, never what.
- A match must start at a word boundary, so a long base64 or hex run (an embedded image, a SQLite
  page) cannot hold a "token" starting mid-run; JWTs must decode (the plugin's own check).
- Values detect-secrets' heuristics call fake (sequential strings, templates ``${X}``/``{{x}}``,
  UUIDs) and documented examples (``…EXAMPLE``, AWS's published sample keys) are not secrets.
- Generic high entropy only with a credential-named key (``client_secret: …``,
  ``"password": "…"``, ``aws_secret_access_key = …``), and never for hex-only values: a run is
  full of sha256 digests, cassette keys and ids, none of them secrets; entropy alone cannot tell
  them from a key, a credential's name can. The entropy is detect-secrets' Shannon entropy over
  the base64 alphabet.

Nothing here opens a socket: the plugins' ``verify`` methods (which call the providers) are never
called. detect-secrets is imported on first use, not when ``oracleproto`` starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

#: Minimum length and Shannon entropy (bits per character, base64 alphabet) of a value assigned to
#: a credential-named key for the generic rule. 20 random base64 characters score about 4.0;
#: English identifiers and sentences of that length about 3.0–3.5.
GENERIC_MIN_LENGTH = 20
GENERIC_MIN_ENTROPY = 3.8
_CREDENTIAL_NAME = (
    r"secret|passw(?:or)?d|passwd|pwd|token|credential|private[_-]?key|access[_-]?key|auth[_-]?key"
    r"|client[_-]?key|account[_-]?key|service[_-]?key|signing[_-]?key|session[_-]?key|api[_-]?key"
)
#: ``name: value`` / ``"name": "value"`` / ``name=value`` whose name holds a credential word. Found
#: from the word on, every repeat bounded: a 5 MB run of letters must not make the scan quadratic.
_GENERIC = re.compile(
    rf"""(?i)(?:{_CREDENTIAL_NAME})[A-Za-z0-9_.-]{{0,40}}["']?\s{{0,4}}[:=]\s{{0,4}}\\?["']?"""
    r"""(?P<value>[A-Za-z0-9+/=_~.-]{20,512})(?![A-Za-z0-9+/=_~.-])"""
)
#: Plugins whose regexes backtrack over a whole line (npm's ``//.+/:_authToken=``) run only on
#: files holding their literal.
_NEEDS = {"NpmDetector": "_authToken"}
#: Regexes that do not start with a literal make the regex engine try every position of a file
#: (0.5–2 s per 7 MB each): they run only in a window around each occurrence of a literal every
#: match holds — (plugin, regex index) → (lower-case literal, chars before it, chars after it).
_ANCHORS: dict[tuple[str, int], tuple[str, int, int]] = {
    ("AWSKeyDetector", 1): ("aws", 0, 110),
    ("MailchimpDetector", 0): ("-us", 32, 6),
    ("SlackDetector", 0): ("xox", 0, 400),
    ("StripeDetector", 0): ("k_live_", 1, 32),
}
#: Where the generic rule looks: each occurrence of the first word of a credential name (lower case)
#: is where a match may start.
_GENERIC_WORDS = (
    "secret",
    "passw",
    "pwd",
    "token",
    "credential",
    "private",
    "access",
    "auth",
    "client",
    "account",
    "service",
    "signing",
    "session",
    "api",
)
_HEX_ONLY = re.compile(r"[0-9a-fA-F.-]+")
_EXAMPLE = re.compile(r"(?i)example|xxxxx|dummy|placeholder|redacted|changeme")
#: A match must not continue a run of these (``prefix`` + token inside a longer blob).
_WORD = re.compile(r"[A-Za-z0-9+/_]")


@dataclass(frozen=True)
class Finding:
    """Where a credential-like value starts and what kind it is (never the value)."""

    offset: int
    kind: str


@cache
def _plugins() -> tuple[RegexBasedDetector, ...]:
    # Imported here: a scan is the only user, and detect-secrets (and its `requests`) need not load
    # when oracleproto starts. Artifactory's "AP" + hex rule matches ordinary upper-case words
    # (APACHEFOUNDATION): left out. OpenAI and basic auth: secret_scan's own shapes cover them.
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
    from detect_secrets.plugins.discord import DiscordBotTokenDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.mailchimp import MailchimpDetector
    from detect_secrets.plugins.npm import NpmDetector
    from detect_secrets.plugins.private_key import PrivateKeyDetector
    from detect_secrets.plugins.pypi_token import PypiTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.square_oauth import SquareOAuthDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    classes = (
        AWSKeyDetector,
        AzureStorageKeyDetector,
        DiscordBotTokenDetector,
        GitHubTokenDetector,
        GitLabTokenDetector,
        JwtTokenDetector,
        MailchimpDetector,
        NpmDetector,
        PrivateKeyDetector,
        PypiTokenDetector,
        SendGridDetector,
        SlackDetector,
        SquareOAuthDetector,
        StripeDetector,
        TelegramBotTokenDetector,
        TwilioKeyDetector,
    )
    return tuple(cls() for cls in classes)


def _fake(value: str) -> bool:
    """detect-secrets' heuristics for values that are not real secrets, and documented examples."""
    from detect_secrets.filters.heuristic import (
        is_potential_uuid,
        is_sequential_string,
        is_templated_secret,
    )

    return (
        is_sequential_string(value)
        or is_potential_uuid(value)
        or is_templated_secret(value)
        or bool(_EXAMPLE.search(value))
    )


def _at_boundary(text: str, start: int) -> bool:
    return start == 0 or not _WORD.match(text, start - 1)


def _occurrences(lowered: str, word: str) -> Iterator[int]:
    at = lowered.find(word)
    while at != -1:
        yield at
        at = lowered.find(word, at + 1)


def _regions(text: str, lowered: str, anchor: tuple[str, int, int] | None) -> Iterator[tuple[int, int]]:
    """(start, end) spans to search: the whole text, or merged windows around the anchor's literal."""
    if anchor is None:
        yield 0, len(text)
        return
    word, before, after = anchor
    span: tuple[int, int] | None = None
    for at in _occurrences(lowered, word):
        start, end = max(0, at - before), min(len(text), at + len(word) + after)
        if span is not None and start <= span[1]:
            span = (span[0], end)
            continue
        if span is not None:
            yield span
        span = (start, end)
    if span is not None:
        yield span


def _matches(plugin: RegexBasedDetector, text: str, lowered: str) -> Iterator[tuple[int, str]]:
    """(offset, value) of every match of the plugin's regexes (a group's value when it has one)."""
    name = type(plugin).__name__
    for index, regex in enumerate(plugin.denylist):
        for start, end in _regions(text, lowered, _ANCHORS.get((name, index))):
            for match in regex.finditer(text, start, end):
                group = next((i for i in range(1, (regex.groups or 0) + 1) if match.group(i)), 0)
                if _at_boundary(text, match.start()):
                    yield match.start(group), match.group(group)


def _generic(text: str, lowered: str) -> Iterator[tuple[int, str]]:
    """(offset, value) of each value assigned to a credential-named key (the generic rule's candidates)."""
    for word in _GENERIC_WORDS:
        for at in _occurrences(lowered, word):
            match = _GENERIC.match(text, at)
            if match is not None:
                yield match.start("value"), match.group("value")


def find_credentials(data: bytes) -> list[Finding]:
    """Every credential-like value in ``data`` (any bytes; binary files give no spurious hits)."""
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
    from detect_secrets.plugins.jwt import JwtTokenDetector

    text = data.decode("latin-1")
    lowered = text.lower()  # Latin-1 lower-casing keeps every offset
    found: list[Finding] = []
    for plugin in _plugins():
        needed = _NEEDS.get(type(plugin).__name__)
        if needed is not None and needed not in text:
            continue
        for offset, value in _matches(plugin, text, lowered):
            if isinstance(plugin, JwtTokenDetector) and not plugin.is_formally_valid(value):
                continue
            if not _fake(value):
                found.append(Finding(offset, f"{plugin.secret_type} (detect-secrets)"))
    entropy = Base64HighEntropyString().calculate_shannon_entropy
    named = {f.offset for f in found}  # a provider's shape is the better name for the same value
    for offset, raw in _generic(text, lowered):
        value = raw.rstrip(".")
        if offset in named or len(value) < GENERIC_MIN_LENGTH or _HEX_ONLY.fullmatch(value) or _fake(value):
            continue
        if entropy(value) >= GENERIC_MIN_ENTROPY:
            found.append(Finding(offset, "high-entropy value of a credential-named key"))
    return sorted(set(found), key=lambda f: (f.offset, f.kind))
