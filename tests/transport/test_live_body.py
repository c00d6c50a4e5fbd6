"""A live reply is read within a size cap (after decoding) and a deadline per attempt (issue 28 §5).

A gzip bomb (64 KB on the wire, 64–256 MiB decoded) made a recording use 1.1 GB and write a
cassette replay then refused; a reply dripped at one byte per read never timed out. The recorder
now refuses a body past ``MAX_RESPONSE_BODY_BYTES`` while decoding it (memory stays bounded) and
gives each attempt one deadline; both outcomes are recorded and replay as they were recorded.
"""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest

from oracleproto.errors import ErrorKind
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.classify import classify_error
from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer
from oracleproto.transport import RecordReplay
from oracleproto.transport.live_body import (
    MAX_RESPONSE_BODY_BYTES,
    REFUSED_REPLY,
    read_live_async,
    read_live_sync,
)
from oracleproto.transport.safe_yaml import MAX_ENTRY_CHARS

JSON = b'{"choices": [{"message": {"role": "assistant", "content": "ok"}}]}'


def bomb(mib: int) -> bytes:
    """gzip of ``mib`` MiB of spaces then a small JSON object: valid JSON once decoded."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * (1 << 20)
    return b"".join(packer.compress(block) for _ in range(mib)) + packer.compress(JSON) + packer.flush()


class _Stream(httpx.AsyncByteStream, httpx.SyncByteStream):
    """A body sent in network-sized pieces (what httpcore hands over), never read whole."""

    def __init__(self, data: bytes, piece: int = 65536) -> None:
        self._data, self._piece = data, piece

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self._data), self._piece):
            yield self._data[start : start + self._piece]

    def __iter__(self) -> Iterator[bytes]:
        for start in range(0, len(self._data), self._piece):
            yield self._data[start : start + self._piece]


class _Serve(httpx.AsyncBaseTransport, httpx.BaseTransport):
    def __init__(self, body: bytes, encoding: str | None) -> None:
        self._body, self._encoding = body, encoding

    def _response(self) -> httpx.Response:
        headers = {"Content-Encoding": self._encoding} if self._encoding else {}
        return httpx.Response(200, headers=headers, stream=_Stream(self._body))

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self._response()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._response()


def request(timeout: float = 5.0, url: str = "http://127.0.0.1:9/v1/chat/completions") -> httpx.Request:
    """A request as httpx builds it: its timeouts travel in the extensions."""
    return httpx.Request("POST", url, extensions={"timeout": httpx.Timeout(timeout).as_dict()})


def test_the_cap_keeps_every_recorded_entry_readable() -> None:
    # Whatever a body holds, its YAML is at most ~5.5x longer (indented lines, \x01 escapes).
    assert MAX_RESPONSE_BODY_BYTES * 8 == MAX_ENTRY_CHARS


@pytest.mark.parametrize(
    ("body", "encoding"),
    [
        (JSON, None),
        (gzip.compress(JSON * 2000), "gzip"),
        (zlib.compress(JSON * 2000), "deflate"),
        (gzip.compress(gzip.compress(JSON)), "gzip, gzip"),
        (JSON, "br"),  # not decoded by httpx here (no brotli): passed through, as aread() did
    ],
)
async def test_bodies_decode_exactly_as_httpx_reads_them(body: bytes, encoding: str | None) -> None:
    _, got = await read_live_async(_Serve(body, encoding), request())
    expected = await _Serve(body, encoding)._response().aread()
    assert got == expected
    assert read_live_sync(_Serve(body, encoding), request())[1] == expected


async def test_a_gzip_bomb_is_refused_while_decoding_with_memory_bounded() -> None:
    wire = bomb(64)
    assert len(wire) < 100_000  # 64 MiB decoded: the bomb
    tracemalloc.start()
    try:
        with pytest.raises(httpx.RemoteProtocolError) as info:
            await read_live_async(_Serve(wire, "gzip"), request())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(info.value) == (
        f"{REFUSED_REPLY}its body is over {MAX_RESPONSE_BODY_BYTES:,} bytes once decoded "
        "(Content-Encoding: gzip); larger replies are not recorded (each cassette entry stays readable)"
    )
    # The cap plus one decoding step (≤ ~1 MiB) and the wire bytes, not the 64 MiB.
    assert peak < MAX_RESPONSE_BODY_BYTES + 4 * 1024 * 1024
    assert classify_error(info.value) is ErrorKind.UNKNOWN


def test_the_sync_path_refuses_the_bomb_too() -> None:
    with pytest.raises(httpx.RemoteProtocolError, match="once decoded"):
        read_live_sync(_Serve(bomb(16), "gzip"), request())


async def test_a_body_that_does_not_decode_is_a_refused_reply() -> None:
    with pytest.raises(httpx.RemoteProtocolError) as info:
        await read_live_async(_Serve(b"this is not gzip at all", "gzip"), request())
    why = "its body could not be decoded (Content-Encoding: gzip)"
    assert str(info.value).startswith(REFUSED_REPLY + why)
    assert classify_error(info.value) is ErrorKind.UNKNOWN


async def test_a_plain_body_over_the_cap_is_refused() -> None:
    with pytest.raises(httpx.RemoteProtocolError, match="over 1,000 bytes once decoded"):
        await read_live_async(_Serve(b" " * 5000, None), request(), limit=1000)


async def test_a_dripped_reply_misses_the_attempts_deadline() -> None:
    dripped = LoopbackResponse(body=JSON * 20, drip_s=0.02)  # ~27 s in all, 20 ms per read
    with LoopbackServer(lambda _: dripped) as server:
        transport = httpx.AsyncHTTPTransport()
        try:
            with pytest.raises(httpx.ReadTimeout) as info:
                await read_live_async(transport, request(0.3, server.base_url + "/v1/chat/completions"))
        finally:
            await transport.aclose()
    assert str(info.value) == (
        "no complete reply within 0.3 s (the channel's timeout bounds the whole attempt, not each read)"
    )
    assert classify_error(info.value) is ErrorKind.NETWORK


async def test_a_refused_reply_is_recorded_and_replays_as_recorded(tmp_path: Path) -> None:
    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    bombed = LoopbackResponse(body=bomb(16), headers=headers)
    recording = RecordReplay(tmp_path, clock=FakeClock(), mode="record")
    with LoopbackServer(lambda _: bombed) as server:
        async with recording, httpx.AsyncClient(transport=recording.transport("search")) as client:
            with pytest.raises(httpx.RemoteProtocolError) as live:
                await client.post(server.base_url + "/search", json={"query": "q"})
    stored = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert stored < 20_000
    replaying = RecordReplay(tmp_path, clock=FakeClock(), mode="replay")
    async with replaying, httpx.AsyncClient(transport=replaying.transport("search")) as client:
        with pytest.raises(httpx.RemoteProtocolError) as replayed:
            await client.post("http://127.0.0.1:9/search", json={"query": "q"})
    assert str(replayed.value) == str(live.value) and str(live.value).startswith(REFUSED_REPLY)
