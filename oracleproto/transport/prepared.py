"""A request resolved to its entry key, and the report of a replay that finds no entry for it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from oracleproto.context import current_call_context, current_logical_call
from oracleproto.errors import ReplayMissError
from oracleproto.primitives.hashing import LONG_STRING, canonical_json, canonical_json_long_text
from oracleproto.primitives.safe_text import escape_surrogates
from oracleproto.transport.diff import nearest
from oracleproto.transport.entry import Entry
from oracleproto.transport.keys import (
    DEFAULT_REQUEST_SHARING,
    KEY_SCHEMA_VERSION,
    Channel,
    canonical_request,
    check_sample_identity,
    context_dict,
    parse_body,
    shared_channels,
)
from oracleproto.transport.shared_keys import SharedKey, SharedKeyMemo
from oracleproto.transport.store import CassetteStore

#: ``(channel, sample context, fingerprint of the projection, attempt) -> occurrence`` (the
#: recorder's counter). The fingerprint is any text that is equal exactly when the projection is.
Occurrence = Callable[[Channel, dict[str, Any] | None, str, int], int | None]
#: The end of every key's material: the schema version, the last field in sorted order.
_KEY_TAIL = (',"v":' + canonical_json(KEY_SCHEMA_VERSION) + "}").encode("utf-8")
#: A body whose first ``LONG_STRING`` bytes hold at most this many double quotes is mostly long
#: strings (prompts, pages): the fast encoder's Python call per string is then paid a few times.
_QUOTES_IN_PREFIX = LONG_STRING // 256
#: The channels keyed by the request alone unless a run chooses otherwise (``keys.RequestSharing``).
SHARED_BY_DEFAULT = shared_channels(DEFAULT_REQUEST_SHARING)


def _mostly_long_strings(body: bytes) -> bool:
    """True when ``canonical_json_long_text`` is likely the faster encoder for this request body."""
    # Only a prefix is counted (a whole 50 KB body costs ~10 µs): chat bodies put the messages, and
    # so the long system prompt, first or right after a few short fields. A wrong guess costs speed
    # only: both encoders write the same text.
    return len(body) >= LONG_STRING and body.count(b'"', 0, LONG_STRING) <= _QUOTES_IN_PREFIX


def _entry_key(ctx_json: str, occurrence: int | None, projection: tuple[bytes, ...]) -> str:
    """``keys.entry_key_from_json`` with the projection's canonical JSON given as UTF-8 parts.

    The parts are hashed where they are (a 50 KB body is not copied into one material string).
    """
    occurrence_text = "null" if occurrence is None else str(int(occurrence))
    digest = hashlib.sha256(
        ('{"context":' + ctx_json + ',"occurrence":' + occurrence_text + ',"request":').encode("utf-8")
    )
    for part in projection:
        digest.update(part)
    digest.update(_KEY_TAIL)
    return digest.hexdigest()


class PreparedRequest:
    """A request resolved to its key (pure data, computed once per attempt)."""

    # The projection's canonical JSON is computed once and serves the key and the hit check; the
    # body is parsed once for the projection and the secrets scan (which is left to the live path:
    # replay stores nothing).
    __slots__ = (
        "_projection",
        "_shared",
        "attempt",
        "body",
        "body_json",
        "channel",
        "ctx",
        "key",
        "meta",
        "occurrence",
        "parsed_body",
    )
    #: The memoised projection (and shared key) of a search/detector request (None on the main-LLM
    #: channel); a request keyed per call uses its projection, not its key.
    _shared: SharedKey | None
    _projection: dict[str, Any] | None
    #: ``keys.parse_body(body)`` when it was computed (main-LLM channel), for the secrets scan.
    parsed_body: tuple[Any, bool] | None

    def __init__(
        self,
        channel: Channel,
        request: httpx.Request,
        body: bytes,
        shared_keys: SharedKeyMemo,
        occurrence: Occurrence,
        *,
        shared_channels: frozenset[Channel] = SHARED_BY_DEFAULT,
    ) -> None:
        self.channel = channel
        self.body = body
        raw_ctx = current_call_context()
        self.ctx = context_dict(raw_ctx)
        call = current_logical_call()
        self.attempt = call.attempt if call is not None else 0
        if channel != "llm":
            # The projection depends on the bytes alone, so it is memoised whichever way it is keyed.
            shared = shared_keys.get(channel, request.method, str(request.url), body)
            self._shared = shared
            self._projection = None
            self.parsed_body = None
            if channel in shared_channels or self.ctx is None:
                # No context or occurrence in the key: the same bytes key the same (memoised).
                self.body_json, self.key, self.meta = shared.body_json, shared.key, dict(shared.meta)
                self.occurrence = None
                return
            # request_sharing "none": keyed like a main-LLM call of this sample (its own entry).
            self.body_json, self.meta = shared.body_json, dict(shared.meta)
            self._key_per_call(shared.projection_parts(), occurrence)
            return
        self._shared = None
        self.parsed_body = parse_body(body)
        projection = canonical_request(channel, request.method, str(request.url), body, self.parsed_body)
        self._projection = projection
        check_sample_identity(channel, projection, raw_ctx)
        encode = canonical_json_long_text if _mostly_long_strings(body) else canonical_json
        self.body_json = encode(projection["body"])
        self.meta = {k: v for k, v in projection.items() if k != "body"}
        try:
            body_utf8 = self.body_json.encode("utf-8")
        except UnicodeEncodeError:
            # A lone surrogate (a page's or a model's \ud800, sent escaped) parses back raw, which
            # UTF-8 cannot encode: the canonical text carries it escaped (issue 28). Only such
            # requests pay for this; every other one keeps its text and key.
            self.body_json = escape_surrogates(self.body_json)
            body_utf8 = self.body_json.encode("utf-8")
        # ``body`` sorts before every other projection field (``keys.projection_json``), so the
        # projection's canonical JSON is these three parts.
        parts = (
            b'{"body":',
            body_utf8,
            b"," + canonical_json(self.meta)[1:].encode("utf-8"),
        )
        if self.ctx is None:
            self.occurrence = occurrence(channel, None, b"".join(parts).decode("utf-8"), self.attempt)
            self.key = _entry_key("null", self.occurrence, parts)
            return
        # The key the request has when it is the first of its kind fingerprints the projection (and
        # the context) as well as the projection's own sha256 did, and is usually the key: one hash
        # of the body instead of two. (``_key_per_call`` does the same; inlined on this hot path.)
        ctx_json = canonical_json(self.ctx)
        first = _entry_key(ctx_json, 0, parts)
        self.occurrence = occurrence(channel, self.ctx, first, self.attempt)
        self.key = first if self.occurrence == 0 else _entry_key(ctx_json, self.occurrence, parts)

    def _key_per_call(self, parts: tuple[bytes, ...], occurrence: Occurrence) -> None:
        """Key a search/detector request by its sample context and its occurrence there, as a
        main-LLM request is keyed (request_sharing "none")."""
        assert self.ctx is not None
        ctx_json = canonical_json(self.ctx)
        first = _entry_key(ctx_json, 0, parts)
        self.occurrence = occurrence(self.channel, self.ctx, first, self.attempt)
        self.key = first if self.occurrence == 0 else _entry_key(ctx_json, self.occurrence, parts)

    @property
    def projection(self) -> dict[str, Any]:
        """The whitelisted projection (rebuilt on demand for a memoised request: error paths only)."""
        if self._projection is None:
            assert self._shared is not None
            self._projection = self._shared.projection()
        return self._projection


def miss_error(prep: PreparedRequest, store: CassetteStore, cassette_dir: Path) -> ReplayMissError:
    """What to raise when replay has no entry for ``prep``: who asked, and the nearest recording."""
    ctx = current_call_context()
    who = (
        f"model {ctx.model!r}, question {ctx.question_id!r}, sample {ctx.sample}, step {ctx.step}"
        if ctx is not None
        else f"model {prep.projection['model']!r}, no sample context"
    )
    if prep.channel != "llm":
        who += (
            ", keyed per call (request_sharing none)"
            if prep.occurrence is not None
            else ", keyed by the request alone (shared across samples)"
        )
    same_channel = store.find(lambda e: e.channel == prep.channel)
    twins = (
        [e for e in same_channel if e.request_body == prep.body_json and e.request_meta == prep.meta]
        if prep.channel != "llm"
        else []
    )
    # A twin: the request itself is recorded, only its keying (sample, occurrence, sharing) differs.
    detail = _keying_detail(prep, twins) if twins else _nearest_detail(prep, same_channel)
    return ReplayMissError(
        f"replay miss on channel {prep.channel}: {who}, occurrence {prep.occurrence}, "
        f"key {prep.key}; cassette {cassette_dir}. {detail}\n"
        "Re-record with --record (or refresh) if the request legitimately changed."
    )


def _nearest_detail(prep: PreparedRequest, same_channel: list[Entry]) -> str:
    """The nearest recorded request (same sample first) and its JSON-path diff."""
    if prep.ctx is not None:
        mine = {k: prep.ctx[k] for k in ("model", "question_id", "sample")}
        same_ctx = [
            e for e in same_channel if e.context is not None and {k: e.context[k] for k in mine} == mine
        ]
        same_channel = same_ctx or same_channel
    found = nearest(prep.projection, same_channel)
    if found is None:
        return f"no {prep.channel} entries are recorded at all"
    near, diff = found
    lines = "\n  ".join(diff) if diff else "(identical request: context or occurrence differs)"
    return (
        f"nearest recorded request (entry {near.key}, context {near.context}, "
        f"occurrence {near.occurrence}):\n  {lines}"
    )


def _keying_detail(prep: PreparedRequest, twins: list[Entry]) -> str:
    """Why a search/detector request recorded byte for byte still misses: how it was keyed."""
    shared = [e for e in twins if e.occurrence is None]
    per_call = [e for e in twins if e.occurrence is not None]
    if prep.occurrence is not None and shared:
        return (
            f"this request is recorded shared across samples (entry {shared[0].key}): the run was "
            "recorded with request_sharing identical_search_and_detector; replay it with that setting"
        )
    if prep.occurrence is None and per_call and prep.ctx is not None:
        return (
            f"this request is recorded per call ({len(per_call)} entries, e.g. {per_call[0].key} for "
            f"context {per_call[0].context}): the run was recorded with request_sharing none; replay "
            "it with that setting"
        )
    mine = sorted(e.occurrence for e in per_call if e.context == prep.ctx and e.occurrence is not None)
    if mine:
        return (
            f"this request is recorded for this sample and step at occurrence(s) "
            f"{', '.join(map(str, mine))}; this call is occurrence {prep.occurrence}: the run now makes "
            "more identical calls here than were recorded"
        )
    other = twins[0]
    return (
        f"this request is recorded only for another sample context (entry {other.key}, context "
        f"{other.context}, occurrence {other.occurrence})"
    )
