"""A live reply's connection is released even when its close is cancelled (live_body.py).

The close after a missed deadline, or after the run stopped its other samples, can itself be hit
by the other cancellation; cut short, it would leave the socket to garbage collection after the
event loop has ended (an "unclosed transport" warning in a later, unrelated test).
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from oracleproto.transport.live_body import read_live_async


class SlowClosingStream(httpx.AsyncByteStream):
    """A body that never ends and whose close takes a few loop turns (like a TLS/TCP shutdown)."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.started = asyncio.Event()
        self.closing = asyncio.Event()

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        self.started.set()
        yield b"x"
        await asyncio.Event().wait()  # never more

    async def aclose(self) -> None:
        self.closing.set()
        for _ in range(5):
            await asyncio.sleep(0)
        self.closed.set()


class Transport(httpx.AsyncBaseTransport):
    def __init__(self, stream: SlowClosingStream) -> None:
        self.stream = stream

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=self.stream, request=request)


async def test_a_close_cancelled_again_still_closes_the_connection() -> None:
    stream = SlowClosingStream()
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    task = asyncio.ensure_future(read_live_async(Transport(stream), request))
    await stream.started.wait()
    task.cancel()  # the run stops this sample mid-read
    await stream.closing.wait()
    task.cancel()  # and a second cancellation arrives while the connection is being closed
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stream.closed.is_set()


async def test_a_single_cancellation_closes_and_propagates() -> None:
    stream = SlowClosingStream()
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    task = asyncio.ensure_future(read_live_async(Transport(stream), request))
    await stream.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert stream.closed.is_set()
