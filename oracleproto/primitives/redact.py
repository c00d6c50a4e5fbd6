"""Pure secret redaction: URLs shown without credentials, echoed key fragments removed.

Two tools, used by settings (snapshot, validation errors), the transport (cassette entries),
the providers (error messages) and the CLI (everything printed):

* :func:`redact_url` replaces a URL's userinfo (``user:password@``) and the values of
  credential query parameters (``api_key=``, ``token=``, ``*_key=`` …) by ``[REDACTED]``.
  A key carried in the URL *path* (``/v1/KEY/chat``) cannot be told from a route segment by
  its shape, so it is redacted only when the key is known (``secrets``); settings refuse a
  base URL that contains a configured key.
* :func:`scrub_fragments` replaces every run of 12 or more characters that also occurs in a
  known secret (providers echo a prefix, a suffix or the middle of a key in 401 messages and
  headers), and exact occurrences of shorter secrets (down to 8 characters). ASCII secrets are
  searched only inside runs of the secrets' own characters (a ``translate`` + ``find`` scan), the
  rest of a text never being read twice.
* :func:`secret_forms` lists what else a secret must be scrubbed as: its URL-encoded and base64
  forms (the transport's ``redact_entry`` scrubs every form, and every fragment of one).
"""

from __future__ import annotations

import base64
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar, overload
from urllib.parse import quote, quote_plus, unquote, unquote_plus

REDACTED = "[REDACTED]"
#: A secret's fragments of this length or more are scrubbed wherever they appear.
MIN_FRAGMENT = 12
#: Secrets shorter than this are not hunted at all (they would hit ordinary text).
MIN_SECRET = 8

#: Query parameter names (lower-cased, ``-`` read as ``_``) that carry credentials.
_CREDENTIAL_PARAMS = frozenset(
    {
        "key",
        "apikey",
        "token",
        "accesstoken",
        "auth",
        "authorization",
        "password",
        "passwd",
        "pwd",
        "secret",
        "sig",
        "signature",
        "credential",
        "credentials",
    }
)
_CREDENTIAL_SUFFIXES = ("_key", "_token", "_secret", "_password", "_sig", "_signature", "_credential")
#: An absolute URL inside free text (messages, log lines).
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")

T = TypeVar("T", str, bytes)


@functools.lru_cache(maxsize=1024)  # names only (never values); every request asks about the same few
def is_credential_param(name: str) -> bool:
    """True when a query parameter of this name carries a credential (``api_key``, ``x-api-key`` …)."""
    norm = unquote_plus(name).strip().lower().replace("-", "_")
    return norm in _CREDENTIAL_PARAMS or norm.endswith(_CREDENTIAL_SUFFIXES)


def _redact_params(part: str) -> str:
    """``a=1&api_key=X`` → ``a=1&api_key=[REDACTED]``; other pairs keep their exact bytes."""
    out: list[str] = []
    for pair in part.split("&"):
        name, sep, _ = pair.partition("=")
        out.append(f"{name}={REDACTED}" if sep and is_credential_param(name) else pair)
    return "&".join(out)


def redact_url(url: str, secrets: Iterable[str] = ()) -> str:
    """``url`` with userinfo, credential query/fragment values and known ``secrets`` redacted.

    Everything else is kept byte for byte (scheme, IPv6 host, port, path, other parameters).
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    end = len(rest)
    for mark in "/?#":
        pos = rest.find(mark)
        if pos != -1:
            end = min(end, pos)
    authority, tail = (rest[:end], rest[end:]) if sep else ("", rest)
    if "@" in authority:
        authority = f"{REDACTED}@{authority.rpartition('@')[2]}"
    tail, hash_, fragment = tail.partition("#")
    path, qmark, query = tail.partition("?")
    if qmark:
        query = _redact_params(query)
    if hash_:
        fragment = _redact_params(fragment)
    redacted = f"{scheme}{sep}{authority}{path}{qmark}{query}{hash_}{fragment}"
    return scrub_fragments(redacted, secrets) if secrets else redacted


def redact_urls_in_text(text: str) -> str:
    """Every absolute URL found in ``text`` passed through :func:`redact_url`."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)


def url_credentials(url: str) -> set[str]:
    """The credential values a URL carries: userinfo parts and credential query values (raw and decoded)."""
    found: set[str] = set()
    _, sep, rest = url.partition("://")
    if sep:
        authority = re.split(r"[/?#]", rest, maxsplit=1)[0]
        if "@" in authority:
            userinfo = authority.rpartition("@")[0]
            user, _, password = userinfo.partition(":")
            for value in (userinfo, user, password):
                found.update({value, unquote(value)})
    head, _, fragment = url.partition("#")
    for part in (head.partition("?")[2], fragment):
        for pair in part.split("&"):
            name, eq, value = pair.partition("=")
            if eq and is_credential_param(name):
                found.update({value, unquote_plus(value)})
    return {v for v in found if len(v) >= MIN_SECRET}


#: Length of the blocks a secret is probed with before its windows are searched, and their stride:
#: every ``MIN_FRAGMENT``-long window of a secret holds one whole block (a window at ``i`` holds
#: the block at ``ceil(i / stride) * stride``, which starts by ``i + stride - 1`` and so ends by
#: ``i + MIN_FRAGMENT``), so a text holding none of the blocks holds none of the windows.
_PROBE = MIN_FRAGMENT // 2
_STRIDE = MIN_FRAGMENT - _PROBE + 1


def _spans(text: T, secret: T) -> list[tuple[int, int]]:
    """Where ``text`` shares a run of ≥ ``MIN_FRAGMENT`` characters with ``secret`` (or holds it whole).

    The union of these spans is what is replaced; a run of length ``L`` shared with the secret is
    covered by the occurrences of the ``L - MIN_FRAGMENT + 1`` windows inside it, so each window's
    occurrences are spans of their own (no extension needed). When none of the secret's probe
    blocks occurs in ``text``, none of its windows can: the usual case costs ``len / 7`` searches,
    not ``len - 11``.
    """
    spans: list[tuple[int, int]] = []
    if len(secret) < MIN_FRAGMENT:
        start = text.find(secret)
        while start != -1:
            spans.append((start, start + len(secret)))
            start = text.find(secret, start + 1)
        return spans
    blocks = range(0, len(secret) - _PROBE + 1, _STRIDE)
    if not any(secret[b : b + _PROBE] in text for b in blocks):
        return spans
    for window in {secret[i : i + MIN_FRAGMENT] for i in range(len(secret) - MIN_FRAGMENT + 1)}:
        start = text.find(window)
        while start != -1:
            spans.append((start, start + MIN_FRAGMENT))
            start = text.find(window, start + 1)
    return spans


def _covering(secrets: list[T]) -> list[T]:
    """``secrets`` without each long one that lies inside another (its windows are the other's too)."""
    return [
        s for s in secrets if len(s) < MIN_FRAGMENT or not any(len(t) > len(s) and s in t for t in secrets)
    ]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _wanted(secrets: Iterable[str]) -> list[str]:
    return sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)


#: Bytes that ordinary text is full of: a secret holding one (``Bearer <token>``) would make the
#: whole text one run, so windows holding one are searched for directly instead.
_COMMON = frozenset(b" \t\n\r\x0b\x0c")


@dataclass(frozen=True)
class _Plan:
    """What a set of secrets compiles to once (memoised): the fast scan's table and patterns."""

    wanted: list[str]
    #: The secrets searched (none inside another), as UTF-8 bytes.
    covering: list[bytes]
    #: ``bytes.translate`` table: 1 for every byte that occurs in a secret (whitespace excepted), 0
    #: for every other; None when a secret is not ASCII (its bytes would not map 1:1 onto characters).
    table: bytes | None
    #: ``shortest`` ones: no shorter run of secret bytes can hold a window or a short secret.
    needle: bytes
    #: Every window (or whole short secret) that holds whitespace, searched for in the whole text, in
    #: groups behind a core they all contain: the group's windows are looked for only where it occurs;
    #: groups whose cores share a gate (:func:`_gated`) are looked for only where the gate occurs.
    spanning: tuple[tuple[bytes, tuple[tuple[bytes, tuple[bytes, ...]], ...]], ...]
    #: Every probe block of the long secrets and the first ``_PROBE`` bytes of each short one: a run
    #: none of whose ``_PROBE``-byte slices is here holds no window and no short secret.
    probes: frozenset[bytes]
    #: How many blocks :func:`_spans` may try on a run that holds none (its cost on such a run).
    probe_count: int


#: Windows grouped behind one core: consecutive starts, at most this many (a core of ≥ 7 bytes).
_GROUP = MIN_FRAGMENT // 2


def _common_groups(secret: bytes) -> list[tuple[int, int, tuple[bytes, ...]]]:
    """The patterns of ``secret`` (its windows, or itself when short) that hold a whitespace byte,
    grouped: windows starting at ``a`` … ``b`` (``b - a < _GROUP``) all hold ``secret[b : a + 12]``,
    the group's core, given as its ``(start, end)`` offsets in ``secret``."""
    if len(secret) < MIN_FRAGMENT:
        return [(0, len(secret), (secret,))] if any(b in _COMMON for b in secret) else []
    starts = [
        i
        for i in range(len(secret) - MIN_FRAGMENT + 1)
        if any(b in _COMMON for b in secret[i : i + MIN_FRAGMENT])
    ]
    groups: list[tuple[int, int, tuple[bytes, ...]]] = []
    while starts:
        first = starts[0]
        chunk = [i for i in starts if i < first + _GROUP]
        starts = starts[len(chunk) :]
        groups.append((chunk[-1], first + MIN_FRAGMENT, tuple(secret[i : i + MIN_FRAGMENT] for i in chunk)))
    return groups


#: Consecutive groups of one secret are looked for behind one gate, the bytes all their cores share,
#: while it is at least this long: ``Bearer <token>``'s two groups share `` <first 5 of token>``.
_GATE = _PROBE


def _gated(secret: bytes) -> list[tuple[bytes, tuple[tuple[bytes, tuple[bytes, ...]], ...]]]:
    """:func:`_common_groups` of ``secret`` behind gates: a text without a gate holds none
    of the cores behind it (each core's span in ``secret`` contains the gate's)."""
    gated: list[tuple[bytes, tuple[tuple[bytes, tuple[bytes, ...]], ...]]] = []
    shared: tuple[int, int] | None = None
    members: list[tuple[bytes, tuple[bytes, ...]]] = []
    for a, b, patterns in _common_groups(secret):
        if shared is not None and min(shared[1], b) - max(shared[0], a) >= _GATE:
            shared = (max(shared[0], a), min(shared[1], b))
        else:
            if shared is not None:
                gated.append((secret[shared[0] : shared[1]], tuple(members)))
            shared, members = (a, b), []
        members.append((secret[a:b], patterns))
    if shared is not None:
        gated.append((secret[shared[0] : shared[1]], tuple(members)))
    return gated


@functools.lru_cache(maxsize=256)  # the same few secrets are asked about for every field of every entry
def _plan(secrets: frozenset[str]) -> _Plan:
    wanted = _wanted(secrets)
    covering = _covering([s.encode("utf-8") for s in wanted])
    plain = [s for s in covering if not (len(s) < MIN_FRAGMENT and any(b in _COMMON for b in s))]
    shortest = min((min(len(s), MIN_FRAGMENT) for s in plain), default=MIN_FRAGMENT)
    table: bytes | None = None
    if all(s.isascii() for s in wanted):
        alphabet = set(b"".join(covering)) - _COMMON
        table = bytes(1 if b in alphabet else 0 for b in range(256))
    spanning = tuple(sorted({gate for s in covering for gate in _gated(s)}))
    probes = [_probe_blocks(s) for s in covering]
    return _Plan(
        wanted,
        covering,
        table,
        b"\x01" * shortest,
        spanning,
        frozenset(b for blocks in probes for b in blocks),
        sum(len(blocks) for blocks in probes),
    )


def _probe_blocks(secret: bytes) -> list[bytes]:
    """What :func:`_spans` looks for first: a long secret's probe blocks; a short one's first bytes."""
    if len(secret) < MIN_FRAGMENT:
        return [secret[:_PROBE]]  # a short secret is at least MIN_SECRET (> _PROBE) long
    return [secret[b : b + _PROBE] for b in range(0, len(secret) - _PROBE + 1, _STRIDE)]


def _may_hold_a_secret(run: bytes, plan: _Plan) -> bool:
    """False when no secret can share a window with ``run`` (none of its slices is a probe block).

    One pass over the run's slices against all secrets' blocks at once, taken only where it is the
    cheaper test (shorter than trying every secret's blocks on the run); otherwise True, and
    :func:`_spans` decides per secret as before.
    """
    slices = len(run) - _PROBE + 1
    if slices >= plan.probe_count:
        return True
    probes = plan.probes
    return any(run[i : i + _PROBE] in probes for i in range(slices))


def _run_spans(data: bytes, plan: _Plan) -> list[tuple[int, int]]:
    """:func:`_spans` of every secret over ``data``, searched only inside runs of secret bytes.

    A window of a secret, or a whole short secret, without whitespace consists of the secrets'
    other bytes only, so every occurrence lies inside a maximal run of such bytes at least
    ``len(needle)`` long: the C-speed ``translate`` + ``find`` locates those runs (ordinary text has
    few), and the probed search runs on them alone. The few patterns holding whitespace (``Bearer
    <token>``'s windows across the space) are looked for in the whole text. The spans are exactly
    those of a search over all of ``data``, so they merge to the same result.
    """
    assert plan.table is not None
    mapped = data.translate(plan.table)
    spans: list[tuple[int, int]] = []
    pos = mapped.find(plan.needle)
    while pos != -1:
        end = mapped.find(b"\x00", pos)
        if end == -1:
            end = len(data)
        run = data[pos:end]
        if _may_hold_a_secret(run, plan):
            spans.extend((pos + a, pos + b) for s in plan.covering for a, b in _spans(run, s))
        pos = mapped.find(plan.needle, end)
    for gate, groups in plan.spanning:
        if gate not in data:
            continue
        for core, patterns in groups:
            if core not in data:
                continue
            for pattern in patterns:
                start = data.find(pattern)
                while start != -1:
                    spans.append((start, start + len(pattern)))
                    start = data.find(pattern, start + 1)
    return spans


def _replaced_bytes(value: bytes, spans: list[tuple[int, int]]) -> bytes:
    marker_b = REDACTED.encode("utf-8")
    parts_b: list[bytes] = []
    last = 0
    for start, end in _merged(spans):
        parts_b.extend((value[last:start], marker_b))
        last = end
    return b"".join([*parts_b, value[last:]])


@overload
def scrub_fragments(value: str, secrets: Iterable[str]) -> str: ...
@overload
def scrub_fragments(value: bytes, secrets: Iterable[str]) -> bytes: ...
def scrub_fragments(value: str | bytes, secrets: Iterable[str]) -> str | bytes:
    """``value`` with every known secret, and every ≥ 12-character fragment of one, replaced.

    ASCII secrets (every API key) take the run scan (:func:`_run_spans`) over the value's UTF-8
    bytes: an ASCII secret's runs are ASCII, so byte spans replaced in the encoded text are the
    character spans of the text (lone surrogates pass through ``surrogatepass``). Other secrets
    take :func:`scrub_fragments_everywhere`; both give the same result (a property test).
    """
    if not value:
        return value
    plan = _plan(frozenset(secrets))
    if not plan.wanted:
        return value
    if plan.table is None:
        return scrub_fragments_everywhere(value, plan.wanted)
    if isinstance(value, bytes):
        spans = _run_spans(value, plan)
        return _replaced_bytes(value, spans) if spans else value
    data = value.encode("utf-8", "surrogatepass")
    spans = _run_spans(data, plan)
    if not spans:
        return value
    return _replaced_bytes(data, spans).decode("utf-8", "surrogatepass")


@overload
def scrub_fragments_everywhere(value: str, secrets: Iterable[str]) -> str: ...
@overload
def scrub_fragments_everywhere(value: bytes, secrets: Iterable[str]) -> bytes: ...
def scrub_fragments_everywhere(value: str | bytes, secrets: Iterable[str]) -> str | bytes:
    """:func:`scrub_fragments` searching the whole value (any secret; the reference of the run scan)."""
    wanted = _wanted(secrets)
    if not wanted or not value:
        return value
    if isinstance(value, bytes):
        encoded = _covering([s.encode("utf-8") for s in wanted])
        return _replaced_bytes(value, [span for s in encoded for span in _spans(value, s)])
    text_spans = [span for s in _covering(wanted) for span in _spans(value, s)]
    parts: list[str] = []
    last = 0
    for start, end in _merged(text_spans):
        parts.extend((value[last:start], REDACTED))
        last = end
    return "".join([*parts, value[last:]])


def secret_forms(secret: str) -> set[str]:
    """``secret`` as stored text may carry it: itself, URL-encoded, and base64-encoded.

    URL-encoded as ``quote`` and ``quote_plus`` write it (every reserved character escaped); base64
    in the standard and the URL-safe alphabets, at each of the three byte alignments a secret can
    have inside a longer encoded text (``Basic`` credentials, a data URL, an echoed header), full
    3-byte groups only (a partial group's characters depend on the neighbouring bytes). Each form is
    then scrubbed like the secret: whole, and every fragment of ``MIN_FRAGMENT`` or more characters
    (a 12-character base64 window is 9 bytes of the secret). A secret shorter than ``MIN_SECRET``
    has no forms (it is not hunted at all), and forms shorter than that are left out.
    """
    if len(secret) < MIN_SECRET:
        return set()
    # The bytes, not the text: a key read from the environment can hold a lone surrogate (an
    # undecodable byte), which quote() would refuse to encode.
    raw = secret.encode("utf-8", "surrogatepass")
    forms = {secret, quote(raw, safe=""), quote_plus(raw, safe="")}
    for offset in range(3):
        part = raw[offset:]
        part = part[: len(part) - len(part) % 3]
        if part:
            encoded = base64.b64encode(part).decode("ascii")
            forms.update({encoded, base64.urlsafe_b64encode(part).decode("ascii")})
    return {f for f in forms if len(f) >= MIN_SECRET}


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """A message made safe to show: URLs redacted, known secrets and their fragments removed."""
    return scrub_fragments(redact_urls_in_text(text), secrets)
