"""Time-masked Tavily search over ``tavily-python``'s async client and the injected httpx client.

``AsyncTavilyClient`` writes its ``Authorization`` header into the client it is given, and
only when that header is not there yet, so handing it the shared client directly would pin
the first key forever (and leak it into the LLM channel's defaults). Each key therefore gets
its own thin ``httpx.AsyncClient`` whose transport forwards every request through the
injected client's ``send`` — the record/replay transport still sees every byte.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import httpx
from tavily import AsyncTavilyClient
from tavily.errors import TimeoutError as TavilyTimeoutError

from oracleproto.clock import Clock
from oracleproto.context import logical_call
from oracleproto.errors import AuthError, ErrorKind, QuotaError
from oracleproto.providers.backoff import backoff_cursor
from oracleproto.providers.classify import classify_error, classify_status
from oracleproto.providers.cookies import use_set_cookie_only_jar
from oracleproto.providers.endpoint import message_secrets
from oracleproto.providers.keypool import KeyLease, TavilyKeyPool
from oracleproto.providers.monitor import CallFailure, CallMonitor, NullMonitor, check_wait
from oracleproto.providers.timing import backoff_delay, call_timing, rate_limit_wait
from oracleproto.providers.types import SearchOutcome, SearchResult
from oracleproto.redact import scrub_text
from oracleproto.settings import SearchSettings
from oracleproto.transport.extensions import served_from_cassette
from oracleproto.transport.response_build import body_response

#: Body phrases of a 4xx that is a rate limit (cool the key down, paper Table 11).
RATE_LIMIT_NEEDLES: tuple[str, ...] = ("rate limit", "too many requests")
#: Body phrases of a 4xx that is a plan/usage limit (retire the key), besides the general quota
#: needles of ``classify``. Tavily answers those with 432 (plan limit) and 433 (pay-as-you-go limit).
USAGE_LIMIT_NEEDLES: tuple[str, ...] = ("usage limit",)
#: Kinds that consume one of ``SEARCH_RETRY_MAX`` retries.
_RETRY_KINDS = frozenset({ErrorKind.NETWORK, ErrorKind.SERVER_5XX, ErrorKind.UNKNOWN})


@dataclass
class _Exchange:
    """The last HTTP response seen by the running search attempt (per task, via a contextvar)."""

    response: httpx.Response | None = None
    body: bytes = b""


_exchange: ContextVar[_Exchange | None] = ContextVar("oracleproto_tavily_exchange", default=None)


class _ForwardTransport(httpx.AsyncBaseTransport):
    """Send each request through another client (its transport, hooks and limits)."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Forward ``request`` and hand back a fresh, fully read response."""
        inner = await self._client.send(request)
        body = inner.content
        exchange = _exchange.get()
        if exchange is not None:
            exchange.response = inner
            exchange.body = body
        # The body is already decoded: drop the framing headers that described the wire bytes.
        headers = [
            (k, v)
            for k, v in inner.headers.multi_items()
            if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
        ]
        # ``httpx.Response(content=body)`` without its read pipeline (the same response).
        return body_response(
            inner.status_code, headers, body, extensions=dict(inner.extensions), request=request
        )


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


def _score(value: Any) -> float | None:
    # A non-finite score would serialise as NaN, which is not JSON a provider accepts.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def parse_results(data: dict[str, Any], max_chars: int) -> tuple[SearchResult, ...]:
    """Tavily ``results`` as ``SearchResult``s, each text field truncated to ``max_chars``.

    The cut happens here, once, so the detector audits exactly the text the model may see; how
    much of the page body was cut is kept so the tool message can say so.
    """
    raw = data.get("results", [])
    if not isinstance(raw, list):
        raise ValueError("Tavily body field 'results' is not a list")
    out: list[SearchResult] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ValueError(f"Tavily result {i} is not an object")
        raw_content = item.get("raw_content")
        body = raw_content if isinstance(raw_content, str) else None
        published = item.get("published_date")
        score = item.get("score")
        out.append(
            SearchResult(
                title=str(item.get("title") or "")[:max_chars],
                url=str(item.get("url") or ""),
                content=str(item.get("content") or "")[:max_chars],
                raw_content=body[:max_chars] if body is not None else None,
                published_date=published if isinstance(published, str) else None,
                score=_score(score),
                raw_content_cut=max(0, len(body) - max_chars) if body is not None else 0,
            )
        )
    return tuple(out)


class TavilySearch:
    """Unfiltered time-masked search (a ``SearchTool``); the leak filter wraps it."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        settings: SearchSettings,
        pool: TavilyKeyPool,
        clock: Clock,
        monitor: CallMonitor | None = None,
    ) -> None:
        self._client = client
        self._monitor: CallMonitor = monitor if monitor is not None else NullMonitor()
        self._settings = settings
        self._pool = pool
        self._clock = clock
        self._per_key: dict[int, tuple[httpx.AsyncClient, AsyncTavilyClient]] = {}

    def _tavily(self, lease: KeyLease) -> AsyncTavilyClient:
        pair = self._per_key.get(lease.index)
        if pair is None:
            http = use_set_cookie_only_jar(
                httpx.AsyncClient(transport=_ForwardTransport(self._client), base_url=self._settings.base_url)
            )
            tavily = AsyncTavilyClient(
                api_key=lease.secret.get_secret_value(), api_base_url=self._settings.base_url, client=http
            )
            pair = (http, tavily)
            self._per_key[lease.index] = pair
        return pair[1]

    async def aclose(self) -> None:
        """Close the per-key wrapper clients (the injected client stays open)."""
        for http, _ in self._per_key.values():
            await http.aclose()
        self._per_key.clear()

    async def _attempt(self, lease: KeyLease, query: str, end_date: date, max_results: int) -> _Attempt:
        exchange = _Exchange()
        token = _exchange.set(exchange)
        try:
            data = await self._tavily(lease).search(
                query,
                search_depth=self._settings.search_depth,
                # SEARCH_DATE_FILTER=off leaves the date limit out (tavily-python drops None fields).
                end_date=end_date.isoformat() if self._settings.date_filter == "on" else None,
                max_results=max_results,
                include_answer=self._settings.include_answer,
                include_raw_content=self._settings.include_raw_content,
                timeout=self._settings.timeout_s,
            )
        except (TavilyTimeoutError, httpx.TransportError, TimeoutError) as exc:
            return _Attempt(
                ErrorKind.NETWORK,
                f"{type(exc).__name__}: {exc}",
                replayed=served_from_cassette(exc=exc),
                error=exc,
                signature=type(exc).__name__,
            )
        except Exception as exc:
            response = exchange.response
            if response is None:
                return _Attempt(
                    classify_error(exc),
                    f"{type(exc).__name__}: {exc}",
                    replayed=served_from_cassette(exc=exc),
                    error=exc,
                    signature=type(exc).__name__,
                )
            replayed = served_from_cassette(response)
            status = response.status_code
            preview = exchange.body[:300].decode("utf-8", errors="replace")
            detail = f"HTTP {status}: {preview}"
            if status == 200:
                # tavily-python raised while decoding a 200: a non-JSON (or non-object) body.
                kind, detail, signature = (
                    ErrorKind.UNKNOWN,
                    f"malformed 200 body: {preview!r}",
                    "malformed 200 body",
                )
            else:
                kind, signature = search_failure_kind(status, exchange.body), f"HTTP {status}"
            return _Attempt(kind, detail, response=response, replayed=replayed, signature=signature)
        finally:
            _exchange.reset(token)
        if not isinstance(data, dict):
            return _Attempt(
                ErrorKind.UNKNOWN,
                "Tavily 200 body is not a JSON object",
                response=exchange.response,
                replayed=served_from_cassette(exchange.response),
                signature="malformed 200 body",
            )
        return _Attempt(None, "", data, exchange.response, replayed=served_from_cassette(exchange.response))

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
                    check_wait(
                        self._monitor,
                        wait,
                        channel="search",
                        model="tavily",
                        reason="every Tavily key is cooling down after a 429",
                        url=self._settings.base_url,
                    )
                    await self._clock.sleep(wait)
                    continue
                call.attempt = attempt
                attempt += 1
                result = last = await self._attempt(lease, query, end_date, max_results)
                if result.kind is None:
                    try:
                        outcome = self._outcome(query, end_date, result, started)
                    except ValueError:
                        result.kind, result.detail = ErrorKind.UNKNOWN, "malformed Tavily results"
                        result.signature = "malformed results"
                    else:
                        if not result.replayed:
                            self._monitor.call_done("search", None)
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

    def _outcome(self, query: str, end_date: date, attempt: _Attempt, started: float) -> SearchOutcome:
        results = parse_results(attempt.data, self._settings.result_max_chars)
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
        )
