"""Backoff delays, ``Retry-After`` parsing and recorded-or-measured timing of a logical call."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from oracleproto.primitives.clock import Clock
from oracleproto.transport.extensions import recorded_timing


def backoff_delay(sequence: Sequence[float], index: int) -> float:
    """The ``index``-th entry of a backoff sequence; past its end the last entry repeats."""
    if not sequence:
        return 0.0
    return float(sequence[min(index, len(sequence) - 1)])


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date); ``None`` if unusable."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


_BODY_RETRY_AFTER = re.compile(r"retry after (\d+(?:\.\d+)?) seconds?", re.IGNORECASE)


def retry_after_from_body(body: str) -> float | None:
    """Seconds from a body's "retry after N seconds" (Azure OpenAI says so in its 429 text)."""
    match = _BODY_RETRY_AFTER.search(body)
    return float(match.group(1)) if match else None


def rate_limit_wait(response: httpx.Response | None, now: datetime) -> float | None:
    """The wait a 429 asks for: the ``Retry-After`` header, else the body's "retry after N seconds"."""
    if response is None:
        return None
    header = parse_retry_after(response.headers.get("retry-after"), now)
    if header is not None:
        return header
    try:
        text = response.text[:2000]
    except httpx.ResponseNotRead:
        return None
    return retry_after_from_body(text)


def elapsed_ms(clock: Clock, started: float) -> int:
    """Milliseconds on the clock's monotonic time since ``started``."""
    return max(0, round((clock.monotonic() - started) * 1000))


def call_timing(
    clock: Clock,
    started: float,
    *,
    response: httpx.Response | None = None,
    exc: BaseException | None = None,
) -> tuple[int, datetime]:
    """Latency and receive time of a logical call's final outcome (a response or a raised error).

    Under the record/replay transport both come from the entry that served the outcome (its
    ``latency_ms`` and ``recorded_at``, set on live and replayed outcomes alike), so outputs are
    byte-identical across record and replay. Only without that transport (a mock in unit tests)
    are they measured on the clock.
    """
    recorded = recorded_timing(response, exc)
    if recorded is not None:
        latency, stamp = recorded
        try:
            parsed = datetime.fromisoformat(stamp)
        except ValueError:
            parsed = None
        if parsed is not None:
            return latency, parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return elapsed_ms(clock, started), clock.now()
