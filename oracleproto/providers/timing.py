"""Backoff delays, ``Retry-After`` parsing and recorded-or-measured timing of a logical call."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx

from oracleproto.clock import Clock
from oracleproto.transport.extensions import LATENCY_MS, RECORDED_AT


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


def elapsed_ms(clock: Clock, started: float) -> int:
    """Milliseconds on the clock's monotonic time since ``started``."""
    return max(0, round((clock.monotonic() - started) * 1000))


def response_timing(response: httpx.Response | None, clock: Clock, started: float) -> tuple[int, datetime]:
    """Latency and receive time: recorded values from the transport when present, else measured.

    Replay serves recorded extensions, so outputs stay byte-identical across replays.
    """
    latency = elapsed_ms(clock, started)
    received = clock.now()
    if response is not None:
        recorded_latency = response.extensions.get(LATENCY_MS)
        if isinstance(recorded_latency, int) and not isinstance(recorded_latency, bool):
            latency = recorded_latency
        recorded_at = response.extensions.get(RECORDED_AT)
        if isinstance(recorded_at, str):
            try:
                parsed = datetime.fromisoformat(recorded_at)
            except ValueError:
                parsed = None
            if parsed is not None:
                received = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return latency, received
