"""httpx transports bound to one channel of a record/replay transport: what provider clients are given.

They know the recorder only as a :class:`ChannelHandler` (what they call on it), so this module
depends on nothing above it and the recorder imports it, not the other way round.
"""

from __future__ import annotations

from typing import Protocol

import httpx

from oracleproto.transport.keys import Channel


class ChannelHandler(Protocol):
    """What serves a channel's requests: ``transport.recorder.RecordReplay``."""

    async def handle_async(self, channel: Channel, request: httpx.Request) -> httpx.Response: ...

    def handle_sync(self, channel: Channel, request: httpx.Request) -> httpx.Response: ...


class AsyncChannelTransport(httpx.AsyncBaseTransport):
    """One channel of a record/replay transport as an httpx async transport."""

    def __init__(self, rr: ChannelHandler, channel: Channel) -> None:
        self._rr = rr
        self._channel = channel

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._rr.handle_async(self._channel, request)


class SyncChannelTransport(httpx.BaseTransport):
    """One channel of a record/replay transport as an httpx sync transport."""

    def __init__(self, rr: ChannelHandler, channel: Channel) -> None:
        self._rr = rr
        self._channel = channel

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._rr.handle_sync(self._channel, request)
