"""``RecordReplay``: one cassette store, channel-bound httpx transports, three modes.

* ``replay`` (default) — never opens a socket; a miss raises ``ReplayMissError``.
* ``record`` — existing entries replay; new logical calls go live and are stored.
* ``refresh`` — every logical call goes live once and is stored in a new generation;
  earlier generations stay untouched for diffing. With a ``should_refresh`` predicate only
  the calls it selects go live; the others replay from the previous generations (and go
  live only when nothing was recorded for them). Either way the new generation ends up
  holding every entry the refreshed run used, so it is a complete recording on its own.

``request_sharing`` (per run, from the harness profile; ``keys.RequestSharing``) says whether
identical search and detector requests share one entry and, while recording, one live call
(``identical_search_and_detector``, the default) or whether each call of a sample gets its own
entry, keyed by the sample context and an occurrence counter like a main-LLM call (``none``).
A replay must use the setting the run was recorded with: the keys differ.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import httpx

from oracleproto.context import LogicalCall, current_logical_call
from oracleproto.errors import CassetteIntegrityError, ConfigError
from oracleproto.primitives.clock import Clock
from oracleproto.transport.channel_transport import AsyncChannelTransport, SyncChannelTransport
from oracleproto.transport.diff import json_diff, stored_request
from oracleproto.transport.entry import Entry
from oracleproto.transport.gate import LiveGate
from oracleproto.transport.keys import (
    DEFAULT_REQUEST_SHARING,
    Channel,
    RequestSharing,
    checked_channel,
    shared_channels,
)
from oracleproto.transport.live_body import read_live_async, read_live_sync
from oracleproto.transport.live_entry import LiveOutcome, attempt_record, live_entry
from oracleproto.transport.outcome import (
    TIMESTAMP_FORMAT,
    ResponseShapes,
    live_exception,
    raw_headers,
    replay_exception,
    stamp_exception,
    to_response,
)
from oracleproto.transport.prepared import PreparedRequest, miss_error
from oracleproto.transport.redo import UsedByDone, redo_on_resume
from oracleproto.transport.session_counts import OccurrenceCounter, TrafficTally
from oracleproto.transport.shared_keys import SharedKeyMemo
from oracleproto.transport.store_open import carried_keys, open_store
from oracleproto.transport.tls import live_async_transport, live_sync_transport
from oracleproto.transport.traffic import SessionTraffic

Mode = Literal["replay", "record", "refresh"]
MODES: tuple[Mode, ...] = ("replay", "record", "refresh")
#: ``(channel, sample context or None) -> True`` when a refresh must re-record that call.
RefreshPredicate = Callable[[Channel, dict[str, Any] | None], bool]


class RecordReplay:
    """The record/replay cache behind every llm, search and detector request."""

    def __init__(
        self,
        cassette_dir: Path,
        *,
        clock: Clock,
        mode: Mode = "replay",
        cache_dir: Path | None = None,
        inner: httpx.AsyncBaseTransport | None = None,
        inner_sync: httpx.BaseTransport | None = None,
        flush_every_s: float = 30.0,
        should_refresh: RefreshPredicate | None = None,
        write_generation: int | None = None,
        used_by_done: UsedByDone | None = None,
        unused_failures_redo: UsedByDone | None = None,
        request_sharing: RequestSharing = DEFAULT_REQUEST_SHARING,
        live_gate: LiveGate | None = None,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"unknown record/replay mode {mode!r}; use one of {', '.join(MODES)}")
        #: Whether identical search/detector requests share entries (``keys.RequestSharing``).
        self.request_sharing: RequestSharing = request_sharing
        self._shared_channels = shared_channels(request_sharing)
        self.cassette_dir = Path(cassette_dir)
        self.mode: Mode = mode
        self.clock = clock
        self._init_live_side(inner, inner_sync, live_gate, flush_every_s)
        self._init_session_state()
        self._should_refresh = should_refresh
        self._used_by_done = used_by_done
        #: Exact "a done sample used this entry" (None = not known exactly); see ``_redo_on_resume``.
        self._unused_failures_redo = unused_failures_redo
        self._shared_keys = SharedKeyMemo()
        self._shapes = ResponseShapes()
        self.store = open_store(
            self.cassette_dir, mode, cache_dir=cache_dir, write_generation=write_generation
        )
        # Keys whose entry in the write generation is a carried-over copy, not a live recording.
        # Resuming a refresh: what an earlier session copied forward (rather than recorded
        # live) must not serve a selected call — the same rule as within one session.
        self._carried: set[str] = carried_keys(self.store) if mode == "refresh" else set()

    def _init_live_side(
        self,
        inner: httpx.AsyncBaseTransport | None,
        inner_sync: httpx.BaseTransport | None,
        live_gate: LiveGate | None,
        flush_every_s: float,
    ) -> None:
        """The live side's state: inner transports (made on first use if not given), gate, caps, flushes."""
        self._inner = inner
        self._inner_sync = inner_sync
        #: Each live async attempt goes through it (the shared ledger: rate tokens, spend reservations).
        self._gate = live_gate
        self._owned_async: httpx.AsyncHTTPTransport | None = None
        self._owned_sync: httpx.HTTPTransport | None = None
        self._flush_every_s = flush_every_s
        self._last_flush = self.clock.monotonic()
        #: Per channel: the provider's concurrency cap, held only while a request is on the wire.
        self._slots: dict[str, asyncio.Semaphore] = {}

    def _init_session_state(self) -> None:
        """This session's bookkeeping: occurrence numbers, calls live or in flight, traffic counters."""
        self._lock = threading.Lock()
        self._occurrences = OccurrenceCounter(self._lock)
        # The counter's per-call numbers, reachable from the recorder (tests check they are forgotten).
        self._call_occurrences = self._occurrences.by_call
        self._live_keys: dict[str, float] = {}
        self._inflight: dict[str, asyncio.Event] = {}
        #: Keys whose logical call is being recorded live: (that call, set when it finishes).
        self._open_calls: dict[str, tuple[LogicalCall, asyncio.Event]] = {}
        self._tally = TrafficTally(self._lock)
        self.counts: Counter[str] = self._tally.counts

    # -- public surface ----------------------------------------------------------------------
    def transport(self, channel: Channel, *, max_in_flight: int | None = None) -> httpx.AsyncBaseTransport:
        """An async httpx transport bound to ``channel``, at most ``max_in_flight`` live sends at once.

        The cap counts requests on the wire only: a call served from the cassettes, one waiting for
        an identical call in flight, and a retry's backoff sleep hold no slot (docs/design/performance.md,
        "Live scheduling").
        """
        checked = checked_channel(channel)
        if max_in_flight is not None:
            if max_in_flight < 1:
                raise ConfigError(f"max_in_flight for {channel} must be at least 1, got {max_in_flight}")
            self._slots[checked] = asyncio.Semaphore(max_in_flight)
        return AsyncChannelTransport(self, checked)

    def sync_transport(self, channel: Channel) -> httpx.BaseTransport:
        """A sync httpx transport bound to ``channel``."""
        return SyncChannelTransport(self, checked_channel(channel))

    def root_digest(self) -> str:
        """Merkle root over every entry digest of the cassette set."""
        return self.store.root_digest()

    def session_traffic(self) -> SessionTraffic:
        """A copy of this session's request counters and the keys used, per channel."""
        return self._tally.traffic()

    def session_stats(self) -> dict[str, dict[str, int]]:
        """Per channel: requests seen, served from cassette, sent live, distinct keys, waited."""
        return self.session_traffic().stats()

    def take_sample_keys(self, model: str, question_id: str, sample: int) -> list[str]:
        """Sorted keys of the entries one sample used (search and detector included); forgets them.

        Taken when the sample is stored, so a sample redone in a later session reports what its
        final trajectory used, never a mix with an interrupted attempt.
        """
        return self._tally.take_sample_keys(model, question_id, sample)

    def flush(self) -> None:
        """Write pending entries to the cassette files now."""
        self.store.compact()
        self._last_flush = self.clock.monotonic()

    def close(self) -> None:
        """Flush, release the journal and index, close a sync inner transport we created.

        When the fold fails (a full disk), the index and the transport are released all the same
        and the fold's error is the one raised: it says what filled up and how to resume, and a
        release failing on the same disk must not replace it.
        """
        try:
            self.store.close()
        except BaseException:
            with contextlib.suppress(OSError, sqlite3.Error):
                self._release_index_and_sync()
            raise
        self._release_index_and_sync()

    def _release_index_and_sync(self) -> None:
        try:
            if self.store.index is not None:
                self.store.index.close()
        finally:
            owned, self._owned_sync = self._owned_sync, None
            if owned is not None:
                owned.close()

    async def aclose(self) -> None:
        """``close`` plus closing an async inner transport we created (use this under asyncio).

        Its connections are closed even when ``close`` fails: left to the garbage collector, their
        sockets would stay open until it ran (for as long as the process lives, used as a library).
        """
        try:
            self.close()
        except BaseException:
            with contextlib.suppress(OSError):
                await self._release_async()
            raise
        await self._release_async()

    async def _release_async(self) -> None:
        owned, self._owned_async = self._owned_async, None
        if owned is not None:
            await owned.aclose()

    async def release_live_async(self) -> None:
        """Close the live async transport this recorder opened, with its pooled connections, and
        nothing else: a later live request opens a new one, and ``close`` still folds the session.

        For an owner that can only ``close`` synchronously, once its event loop is gone (the pytest
        plugin's recorder fixture): its async clients call this on their own loop first.
        """
        if self._owned_async is not None and self._inner is self._owned_async:
            self._inner = None
        await self._release_async()

    def __enter__(self) -> RecordReplay:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    async def __aenter__(self) -> RecordReplay:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- keying ------------------------------------------------------------------------------
    def _occurrence(
        self, channel: Channel, ctx: dict[str, Any] | None, projection_text: str, attempt: int
    ) -> int | None:
        """The occurrence number ``PreparedRequest`` keys a request with (``OccurrenceCounter``)."""
        return self._occurrences.number(channel, ctx, projection_text, attempt)

    # -- decisions ---------------------------------------------------------------------------
    def _lookup(self, prep: PreparedRequest) -> Entry | None:
        """The entry that should serve this attempt, or None to go live."""
        entry = self.store.get(prep.key)
        if self.mode == "replay":
            if entry is None:
                raise miss_error(prep, self.store, self.cassette_dir)
            return entry
        if self.mode == "refresh":
            entry = self._refresh_lookup(prep, entry)
        if entry is not None and prep.attempt > 0 and prep.key in self._live_keys:
            return None  # a retry of a call this session is recording
        redo = entry is not None and redo_on_resume(
            prep.channel,
            # Keyed per call: the entry belongs to this one slot (a shared entry has no occurrence).
            prep.occurrence is not None,
            entry,
            write_generation=self.store.write_generation,
            used_by_done=self._used_by_done,
            unused_failures_redo=self._unused_failures_redo,
        )
        if redo and prep.key not in self._live_keys:
            # A call keyed per sample that failed in an earlier session belongs to exactly one slot,
            # and that slot is being redone (the resume rule): serving the old 401/5xx would fail it
            # again.
            return None
        return entry

    def _refresh_lookup(self, prep: PreparedRequest, entry: Entry | None) -> Entry | None:
        write_gen = self.store.write_generation
        if self._should_refresh is None or self._should_refresh(prep.channel, prep.ctx):
            # Selected: only what this refresh itself recorded live may serve it.
            with self._lock:
                carried = prep.key in self._carried
            if entry is not None and (entry.generation != write_gen or carried):
                return None
            return entry
        # Not selected: the previous recording serves it, even when a selected call has
        # meanwhile re-recorded the same shared (search/detector) key (a key keyed per call is one
        # sample's, so it is selected or not with its sample); nothing recorded → live.
        previous = self.store.get_before(prep.key, write_gen)
        return previous if previous is not None else entry

    def _carry(self, entry: Entry) -> None:
        """Copy an older-generation entry served during a refresh into the write generation."""
        with self._lock:
            current = self.store.get_in(entry.key, self.store.write_generation)
            if current is None:
                self._carried.add(entry.key)
                self.store.put(dataclasses.replace(entry, requests=1, attempts=list(entry.attempts)))
            else:
                current.requests += 1
                self.store.put(current)

    def _verify_hit(self, prep: PreparedRequest, entry: Entry) -> None:
        if entry.request_meta == prep.meta and entry.request_body == prep.body_json:
            return
        diff = json_diff(stored_request(entry), prep.projection)
        raise CassetteIntegrityError(
            f"entry {entry.key} ({entry.channel}) was found by key but its stored request differs "
            f"from the live one — a key collision or key-schema bug:\n  " + "\n  ".join(diff)
        )

    def _serve(self, prep: PreparedRequest, entry: Entry, request: httpx.Request) -> httpx.Response:
        self._verify_hit(prep, entry)
        self._tally.count(prep, "hits")
        if self.mode == "refresh" and prep.attempt == 0 and entry.generation != self.store.write_generation:
            self._carry(entry)
        elif self.mode != "replay" and prep.attempt == 0:
            entry.requests += 1
            self.store.put(entry)
        if entry.exception is not None:
            raise replay_exception(entry, request, f"entry {entry.key}")
        # Replay's entries are verified on load and never change: their shapes can be kept.
        shapes = self._shapes if self.mode == "replay" else None
        return to_response(entry, request, from_cassette=True, shapes=shapes)

    def _store_live(
        self, prep: PreparedRequest, request: httpx.Request, started: float, outcome: LiveOutcome
    ) -> Entry:
        now = self.clock.monotonic()
        stamp = self.clock.now().strftime(TIMESTAMP_FORMAT)
        attempt = attempt_record(prep.attempt, outcome, round((now - started) * 1000), stamp)
        with self._lock:
            previous = self.store.get(prep.key) if prep.key in self._live_keys else None
            first = self._live_keys.setdefault(prep.key, started) if previous is not None else started
            self._live_keys[prep.key] = first
        entry = live_entry(
            prep,
            request,
            outcome,
            previous=previous,
            attempt=attempt,
            latency_ms=round((now - first) * 1000),
            stamp=stamp,
        )
        with self._lock:
            self._carried.discard(prep.key)
        self.store.put(entry)
        self._tally.count(prep, "live")
        if now - self._last_flush >= self._flush_every_s:
            self.flush()
        return entry

    # -- the two send paths ------------------------------------------------------------------
    async def handle_async(self, channel: Channel, request: httpx.Request) -> httpx.Response:
        """Serve one attempt of an async request on ``channel``."""
        body = await request.aread()
        prep = PreparedRequest(
            channel, request, body, self._shared_keys, self._occurrence, shared_channels=self._shared_channels
        )
        self._tally.count(prep, "requests")
        call = current_logical_call()
        owner = self._open_calls.get(prep.key)
        if owner is not None and owner[0] is not call:
            # Another logical call is recording this key (shared search/detector requests): wait
            # for its final outcome, never serve one of its intermediate 5xx/429 attempts, which
            # replay could not reproduce (replay only has the final outcome). A key of a call keyed
            # per sample and occurrence is never another call's, so such calls never wait here.
            self._tally.count(prep, "waited")
            await owner[1].wait()
        entry = self._lookup(prep)
        if entry is None and self.mode != "replay" and prep.attempt == 0:
            # Identical concurrent calls (shared search/detector requests) wait for one live call.
            waiter = self._inflight.get(prep.key)
            if waiter is not None:
                self._tally.count(prep, "waited")
                await waiter.wait()
                entry = self._lookup(prep)
        if entry is not None:
            return self._serve(prep, entry, request)
        if call is not None and prep.key not in self._open_calls:
            self._open_logical_call(prep.key, call)
        event = self._inflight.setdefault(prep.key, asyncio.Event())
        try:
            return await self._live_async(prep, request)
        finally:
            event.set()
            if self._inflight.get(prep.key) is event:
                del self._inflight[prep.key]

    def _open_logical_call(self, key: str, call: LogicalCall) -> None:
        done = asyncio.Event()
        self._open_calls[key] = (call, done)

        def release() -> None:
            done.set()
            if self._open_calls.get(key, (None,))[0] is call:
                del self._open_calls[key]

        call.on_finish.append(release)

    async def _live_async(self, prep: PreparedRequest, request: httpx.Request) -> httpx.Response:
        inner = self._inner
        if inner is None:
            inner = self._inner = self._owned_async = live_async_transport()
        slots = self._slots.get(prep.channel)
        if slots is None:
            return await self._gated(inner, prep, request)
        async with slots:
            return await self._gated(inner, prep, request)

    async def _gated(
        self, inner: httpx.AsyncBaseTransport, prep: PreparedRequest, request: httpx.Request
    ) -> httpx.Response:
        if self._gate is None:
            return await self._send_async(inner, prep, request)
        return await self._gate.around(prep.channel, request, lambda: self._send_async(inner, prep, request))

    async def _send_async(
        self, inner: httpx.AsyncBaseTransport, prep: PreparedRequest, request: httpx.Request
    ) -> httpx.Response:
        started = self.clock.monotonic()
        try:
            # The decoded body is capped and the attempt has one deadline (``live_body``).
            response, body = await read_live_async(inner, request)
        except httpx.TransportError as exc:
            raise self._store_exception(prep, request, started, exc) from None
        return self._store_response(prep, request, started, response, body)

    def _store_exception(
        self, prep: PreparedRequest, request: httpx.Request, started: float, exc: httpx.TransportError
    ) -> httpx.TransportError:
        """Record a live transport failure; return what to raise: the scrubbed message, the entry's timing."""
        entry = self._store_live(prep, request, started, LiveOutcome.failed(exc))
        return stamp_exception(live_exception(entry, request, exc), entry)

    def _store_response(
        self,
        prep: PreparedRequest,
        request: httpx.Request,
        started: float,
        response: httpx.Response,
        body: bytes,
    ) -> httpx.Response:
        """Record a live response (either send path) and return it as the cache serves it."""
        outcome = LiveOutcome(response.status_code, response.reason_phrase, raw_headers(response), body)
        entry = self._store_live(prep, request, started, outcome)
        return to_response(entry, request, from_cassette=False)

    def handle_sync(self, channel: Channel, request: httpx.Request) -> httpx.Response:
        """Serve one attempt of a sync request on ``channel``."""
        body = request.read()
        prep = PreparedRequest(
            channel, request, body, self._shared_keys, self._occurrence, shared_channels=self._shared_channels
        )
        self._tally.count(prep, "requests")
        entry = self._lookup(prep)
        if entry is not None:
            return self._serve(prep, entry, request)
        if self._inner_sync is None:
            self._inner_sync = self._owned_sync = live_sync_transport()
        started = self.clock.monotonic()
        try:
            response, body = read_live_sync(self._inner_sync, request)
        except httpx.TransportError as exc:
            raise self._store_exception(prep, request, started, exc) from None
        return self._store_response(prep, request, started, response, body)
