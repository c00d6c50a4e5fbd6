"""Time-masked Tavily search: ``POST {base_url}/search`` over the injected httpx client.

The request is built here (``search_request``), not by ``tavily-python``: that client fixes the
body's key order, its ``json.dumps`` defaults and where the key travels (an ``Authorization``
header), and the harness profile must control all three. It is sent through the injected client
with the key per request (never on the client), so the record/replay transport sees every byte and
one client serves every key of the pool. Failures are classified from the HTTP status and body
(paper Tables 11 and 14); each failed attempt also keeps the earlier harness's description of it
(``SearchOutcome.error_detail``), secrets scrubbed, for profiles whose failure payload shows it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import httpx

from oracleproto.context import logical_call
from oracleproto.errors import AuthError, ErrorKind, QuotaError
from oracleproto.primitives.clock import Clock
from oracleproto.primitives.redact import scrub_text
from oracleproto.profile.builtin import builtin_profile
from oracleproto.profile.model import HarnessProfile
from oracleproto.providers.backoff import backoff_cursor
from oracleproto.providers.classify import classify_error, classify_status
from oracleproto.providers.endpoint import endpoint_url, message_secrets
from oracleproto.providers.keypool import KeyLease, TavilyKeyPool
from oracleproto.providers.monitor import CallFailure, CallMonitor, NullMonitor, check_wait
from oracleproto.providers.search_request import DEFAULT_CLIENT_SOURCE, search_body, search_headers
from oracleproto.providers.search_results import parse_results
from oracleproto.providers.timing import backoff_delay, call_timing, rate_limit_wait
from oracleproto.providers.types import SearchOutcome
from oracleproto.settings.model import SearchSettings
from oracleproto.transport.extensions import served_from_cassette

# ``parse_results`` lives in ``search_results``; it stays importable from here.
__all__ = ["DETAIL_BODY_CHARS", "TavilySearch", "parse_results", "search_failure_kind"]

#: Body phrases of a 4xx that is a rate limit (cool the key down, paper Table 11).
RATE_LIMIT_NEEDLES: tuple[str, ...] = ("rate limit", "too many requests")
#: Body phrases of a 4xx that is a plan/usage limit (retire the key), besides the general quota
#: needles of ``classify``. Tavily answers those with 432 (plan limit) and 433 (pay-as-you-go limit).
USAGE_LIMIT_NEEDLES: tuple[str, ...] = ("usage limit",)
#: Kinds that consume one of ``SEARCH_RETRY_MAX`` retries.
_RETRY_KINDS = frozenset({ErrorKind.NETWORK, ErrorKind.SERVER_5XX, ErrorKind.UNKNOWN})
#: Characters of a non-200 body kept in ``error_detail`` (the earlier harness's ``resp.text[:500]``).
DETAIL_BODY_CHARS = 500


@dataclass
class _Attempt:
    kind: ErrorKind | None = None
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)
    response: httpx.Response | None = None
    #: The outcome was replayed from a cassette: it is final, never retried or rotated.
    replayed: bool = False
    #: The raised error, when there was no usable response (its recorded timing rides on it).
    error: BaseException | None = None
    #: What failed, for the circuit breaker (``ConnectError``, ``HTTP 404``).
    signature: str = ""
    #: The failure as the earlier harness described it (``SearchOutcome.error_detail``), unscrubbed.
    error_detail: str = ""


def search_failure_kind(status: int, body: bytes) -> ErrorKind:
    """The kind of a non-200 Tavily answer: Table 14 plus quota, with Tavily's wording of limits.

    429 (or a non-auth 4xx that speaks of a rate limit) → ``rate_limit``: cool the key down.
    432/433, 402, or a non-auth 4xx that speaks of a usage limit or exhausted credit → ``quota``:
    retire the key for this session.
    """
    kind = classify_status(status, body)
    if kind in (ErrorKind.QUOTA, ErrorKind.RATE_LIMIT) or not 400 <= status < 500 or status == 401:
        return kind
    text = body.decode("utf-8", errors="replace").lower()
    if any(needle in text for needle in USAGE_LIMIT_NEEDLES):
        return ErrorKind.QUOTA
    if any(needle in text for needle in RATE_LIMIT_NEEDLES):
        return ErrorKind.RATE_LIMIT
    return kind


def _read_response(response: httpx.Response) -> _Attempt:
    """The outcome of one answered attempt: the decoded body, or the failure it is."""
    replayed = served_from_cassette(response)
    status, content = response.status_code, response.content
    preview = content[:300].decode("utf-8", errors="replace")
    failed = _Attempt(response=response, replayed=replayed)
    if status != 200:
        failed.kind, failed.signature = search_failure_kind(status, content), f"HTTP {status}"
        failed.detail = f"HTTP {status}: {preview}"
        failed.error_detail = f"HTTP {status}: {response.text[:DETAIL_BODY_CHARS]}"
        return failed
    failed.kind, failed.signature = ErrorKind.UNKNOWN, "malformed 200 body"
    failed.detail = f"malformed 200 body: {preview!r}"
    try:
        data = json.loads(content)
    except (ValueError, RecursionError) as exc:
        # ValueError covers a JSON error and undecodable bytes (json.loads detects UTF-8/16/32).
        failed.error_detail = f"Tavily returned non-JSON body: {exc}"
        return failed
    if not isinstance(data, dict):
        failed.error_detail = f"Tavily returned a JSON {type(data).__name__}, not an object"
        return failed
    return _Attempt(None, "", data, response, replayed=replayed)


class TavilySearch:
    """Unfiltered time-masked search (a ``SearchTool``); the leak filter wraps it.

    ``profile`` decides the request body (members, order, serialisation) and where the key goes,
    and how result fields are cut; ``client_source`` is the ``X-Client-Source`` header
    (tavily-python's by default; ``None`` sends none).
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        settings: SearchSettings,
        pool: TavilyKeyPool,
        clock: Clock,
        monitor: CallMonitor | None = None,
        *,
        profile: HarnessProfile | None = None,
        client_source: str | None = DEFAULT_CLIENT_SOURCE,
    ) -> None:
        self._client = client
        self._monitor: CallMonitor = monitor if monitor is not None else NullMonitor()
        self._settings = settings
        self._pool = pool
        self._clock = clock
        self._profile = profile if profile is not None else builtin_profile()
        self._client_source = client_source
        self._url = httpx.URL(endpoint_url(settings.base_url, "search"))

    @property
    def profile(self) -> HarnessProfile:
        """The harness profile this client writes its requests by."""
        return self._profile

    async def aclose(self) -> None:
        """Nothing to release: requests go through the injected client, which its owner closes."""

    def request_bytes(self, key: str, query: str, end_date: date, max_results: int) -> bytes:
        """The body one attempt sends with ``key`` (pure; the profile's order and serialisation)."""
        request = self._profile.search_request
        body = search_body(
            request,
            self._settings,
            query=query,
            end_date=end_date,
            max_results=max_results,
            api_key=key,
            profile_name=self._profile.name,
        )
        return self._profile.request_json.search.encode(body)

    async def _attempt(self, lease: KeyLease, query: str, end_date: date, max_results: int) -> _Attempt:
        key = lease.secret.get_secret_value()
        content = self.request_bytes(key, query, end_date, max_results)
        headers = search_headers(self._profile.search_request, key, self._client_source)
        result = await self._send(content, headers)
        if result.error_detail:
            # It may reach the model (a profile's failure payload) and the terminal: no key, no
            # URL credentials (a 401 body can echo the key).
            hidden = message_secrets(self._settings.base_url, key)
            result.error_detail = scrub_text(result.error_detail, hidden)
        return result

    async def _send(self, content: bytes, headers: dict[str, str]) -> _Attempt:
        try:
            response = await self._client.post(
                self._url, content=content, headers=headers, timeout=self._settings.timeout_s
            )
        except (httpx.TransportError, TimeoutError) as exc:
            # Anything else (a replay miss, a damaged cassette) is not a search outcome: it propagates.
            detail = f"{type(exc).__name__}: {exc}"
            return _Attempt(
                # network, or unknown for a reply the transport refused (too large once decoded)
                classify_error(exc),
                detail,
                replayed=served_from_cassette(exc=exc),
                error=exc,
                signature=type(exc).__name__,
                error_detail=detail,
            )
        return _read_response(response)

    async def search(self, query: str, end_date: date, max_results: int) -> SearchOutcome:
        """Search with the harness-held cutoff; failures come back as ``error_kind`` (auth raises)."""
        # The channel's concurrency cap is held by the transport, only while a request is on the wire
        # (a key cooldown or a backoff sleep holds none).
        return await self._search(query, end_date, max_results)

    async def _search(self, query: str, end_date: date, max_results: int) -> SearchOutcome:
        started = self._clock.monotonic()
        # retries caps this call; the backoff position is the sample's (paper App. B.7).
        cursor = backoff_cursor()
        retries = 0
        cooldown_waits = 0
        #: The last attempt: a failed call's latency is the recorded latency of its final outcome.
        last: _Attempt | None = None
        with logical_call() as call:
            attempt = 0
            while True:
                # Raises AuthError / QuotaError once every key is dead.
                lease = self._pool.acquire()
                if lease is None:
                    # Every live key is cooling down. Waiting is bounded so that a pool that
                    # stays rate-limited ends the call instead of spinning forever — but only
                    # once the call has sent a request: a call that failed without one would
                    # have no entry, and replay (whose outcomes never cool the pool) would send
                    # that request and miss.
                    if cooldown_waits > self._settings.retry_max and last is not None:
                        return self._failed(query, end_date, ErrorKind.RATE_LIMIT, last, started)
                    cooldown_waits += 1
                    wait = self._pool.seconds_until_available()
                    limited = last.response if last is not None else None
                    check_wait(
                        self._monitor,
                        wait,
                        channel="search",
                        model="tavily",
                        reason="every Tavily key is cooling down after a rate limit",
                        url=self._settings.base_url,
                        status_code=limited.status_code if limited is not None else None,
                    )
                    await self._clock.sleep(wait)
                    continue
                call.attempt = attempt
                attempt += 1
                result = last = await self._attempt(lease, query, end_date, max_results)
                outcome = self._succeeded(query, end_date, result, started) if result.kind is None else None
                if outcome is not None:
                    return outcome
                if result.replayed:
                    # A replayed outcome is final (the recording holds the retries and key swaps).
                    self._raise_run_stopper(result, lease)
                    assert result.kind is not None
                    return self._failed(query, end_date, result.kind, result, started)
                if result.kind is ErrorKind.AUTH:
                    self._pool.report_auth_failure(lease)
                    continue
                if result.kind is ErrorKind.QUOTA:
                    # This key's plan or credit is used up for the session; the others may still
                    # serve (the pool raises QuotaError once no key is left).
                    self._pool.report_quota_exhausted(lease)
                    continue
                if result.kind is ErrorKind.RATE_LIMIT:
                    asked = rate_limit_wait(result.response, self._clock.now())
                    cooldown = self._settings.key_cooldown_s if asked is None else asked
                    self._pool.report_rate_limited(lease, cooldown)
                    continue
                if result.kind in _RETRY_KINDS and retries < self._settings.retry_max:
                    delay = backoff_delay(self._settings.backoff_s, cursor.take("search", "backoff"))
                    check_wait(
                        self._monitor,
                        delay,
                        channel="search",
                        model="tavily",
                        reason=f"{result.kind.value} backoff",
                        url=self._settings.base_url,
                    )
                    await self._clock.sleep(delay)
                    retries += 1
                    continue
                assert result.kind is not None
                self._monitor.call_done(
                    "search", CallFailure(result.kind, result.signature, self._settings.base_url)
                )
                return self._failed(query, end_date, result.kind, result, started)

    def _raise_run_stopper(self, result: _Attempt, lease: KeyLease) -> None:
        """A replayed 401/403 or quota outcome stops the run, as it did when it was recorded."""
        hidden = message_secrets(self._settings.base_url, lease.secret.get_secret_value())
        detail = scrub_text(result.detail, hidden)
        if result.kind is ErrorKind.AUTH:
            raise AuthError(
                f"Tavily rejected every key when this call was recorded: {detail}", channel="search"
            )
        if result.kind is ErrorKind.QUOTA:
            raise QuotaError(
                f"Tavily's plan or usage limit was exhausted when this call was recorded: {detail}",
                channel="search",
                remedy="raise the Tavily plan limit or add a key with credit to TAVILY_API_KEY",
            )

    def _succeeded(
        self, query: str, end_date: date, result: _Attempt, started: float
    ) -> SearchOutcome | None:
        """The outcome of a 200 attempt; ``None`` (and ``result`` marked failed) if its results are junk."""
        try:
            outcome = self._outcome(query, end_date, result, started)
        except ValueError as exc:
            result.kind, result.detail = ErrorKind.UNKNOWN, "malformed Tavily results"
            result.signature = "malformed results"
            result.error_detail = f"malformed Tavily results: {exc}"
            return None
        if not result.replayed:
            self._monitor.call_done("search", None)
        return outcome

    def _outcome(self, query: str, end_date: date, attempt: _Attempt, started: float) -> SearchOutcome:
        results = parse_results(attempt.data, self._settings.result_max_chars, self._profile.truncation)
        answer = attempt.data.get("answer")
        latency, _ = call_timing(self._clock, started, response=attempt.response)
        return SearchOutcome(
            query=query,
            end_date=end_date,
            results=results,
            answer=answer if isinstance(answer, str) else None,
            published_dates_raw=tuple(r.published_date for r in results),
            audit=None,
            error_kind=None,
            latency_ms=latency,
        )

    def _failed(
        self, query: str, end_date: date, kind: ErrorKind, last: _Attempt | None, started: float
    ) -> SearchOutcome:
        # The recorded latency of the final attempt's entry covers every attempt and backoff
        # before it; a wait for a cooling key pool *after* it is not part of any recording.
        response = last.response if last is not None else None
        error = last.error if last is not None else None
        latency, _ = call_timing(self._clock, started, response=response, exc=error)
        return SearchOutcome(
            query=query,
            end_date=end_date,
            results=(),
            answer=None,
            published_dates_raw=(),
            audit=None,
            error_kind=kind.value,
            latency_ms=latency,
            error_detail=(last.error_detail or None) if last is not None else None,
        )
