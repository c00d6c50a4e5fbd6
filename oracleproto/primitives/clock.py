"""Injected clocks: wall time, monotonic time and sleeping go through one object.

Providers sleep for backoff through a clock so tests and replay never wait; the store
stamps rows with the clock so replay can substitute recorded time.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """What the harness needs from time."""

    def now(self) -> datetime:
        """Current UTC time (timezone-aware)."""
        ...

    def monotonic(self) -> float:
        """Seconds on a monotonic clock, for latency measurement."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a fake clock only records the request)."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        """Current UTC time."""
        return datetime.now(UTC)

    def monotonic(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        """``asyncio.sleep``."""
        await asyncio.sleep(seconds)


class FakeClock:
    """A clock for tests and replay: sleeping advances time instantly and is recorded."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        self._mono = 0.0
        self.sleeps: list[float] = []

    def now(self) -> datetime:
        """The fake current time."""
        return self._now

    def monotonic(self) -> float:
        """The fake monotonic time."""
        return self._mono

    async def sleep(self, seconds: float) -> None:
        """Record the sleep and advance time without waiting."""
        self.sleeps.append(seconds)
        self.advance(seconds)
        await asyncio.sleep(0)

    def advance(self, seconds: float) -> None:
        """Move both clocks forward."""
        self._mono += seconds
        self._now = self._now + timedelta(seconds=seconds)
