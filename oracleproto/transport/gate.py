"""What a live call passes through before it is sent: the run's ledger, when it has one.

``RecordReplay`` hands each live attempt (never one served from the cassettes) to its gate, which
may wait (a rate limit), refuse (a spend cap, a lost ledger: a ``RunStoppedError``) or let it go,
then learns what came back. The gate runs inside the channel's concurrency slot and before the
attempt's deadline starts, so a wait for a rate token is never taken for a slow provider.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

import httpx

from oracleproto.transport.keys import Channel


class LiveGate(Protocol):
    """Wraps each live attempt of a recording (``ledger.LedgerGate``)."""

    async def around(
        self, channel: Channel, request: httpx.Request, send: Callable[[], Awaitable[httpx.Response]]
    ) -> httpx.Response:
        """Send the attempt with ``send()`` (once, or not at all by raising) and return its response."""
        ...
