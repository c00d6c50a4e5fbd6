"""A recording's connections are closed even when its closing fold fails (a full disk).

The fold's error is the one the caller sees (it says what filled up and how to resume); the
sockets the recording opened to the providers are closed all the same, not left to the garbage
collector (which, in a process using oracleproto as a library, may never come for them).
"""

from __future__ import annotations

import asyncio
import errno
import os
import socketserver
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from oracleproto.context import CallContext, call_context
from oracleproto.transport.recorder import RecordReplay
from tests.transport.helpers import CHAT_PATH, chat_body, make_rr

#: How long a test waits for the server to see the client hang up before it fails.
HANG_UP_WAIT_S = 10.0


class _KeepAlive(socketserver.StreamRequestHandler):
    """HTTP/1.1 keep-alive, a chat completion for every request; notes when the client hangs up."""

    server: _Server

    def handle(self) -> None:
        while self.rfile.readline():
            length = 0
            while (header := self.rfile.readline()) not in (b"\r\n", b""):
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            self.rfile.read(length)
            body = chat_body("ok")
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            self.wfile.write(head.encode() + body)
        self.server.hung_up.set()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _KeepAlive)
        self.hung_up = threading.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def server() -> Iterator[_Server]:
    served = _Server()
    thread = threading.Thread(target=served.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.shutdown()
        served.server_close()
        thread.join(timeout=5)


def _disk_full(rr: RecordReplay, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*, last: bool = False) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(rr.store, "compact", full)


def _chat() -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


async def test_a_failed_fold_still_closes_the_async_connections(
    tmp_path: Path, server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    rr = make_rr(tmp_path, "record")
    async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
        with call_context(CallContext("m", "q", 0)):
            assert (await client.post(CHAT_PATH, json=_chat())).status_code == 200
    assert not server.hung_up.is_set()  # the recording's own pool keeps the connection
    _disk_full(rr, monkeypatch)
    with pytest.raises(OSError) as failed:
        await rr.aclose()
    assert failed.value.errno == errno.ENOSPC  # the fold's error, not one from a later release
    assert await asyncio.to_thread(server.hung_up.wait, HANG_UP_WAIT_S)


def test_a_failed_fold_still_closes_the_sync_connections(
    tmp_path: Path, server: _Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    rr = make_rr(tmp_path, "record")
    with (
        httpx.Client(transport=rr.sync_transport("llm"), base_url=server.base_url) as client,
        call_context(CallContext("m", "q", 0)),
    ):
        assert client.post(CHAT_PATH, json=_chat()).status_code == 200
    assert not server.hung_up.is_set()
    _disk_full(rr, monkeypatch)
    with pytest.raises(OSError) as failed:
        rr.close()
    assert failed.value.errno == errno.ENOSPC
    assert server.hung_up.wait(HANG_UP_WAIT_S)


async def test_releasing_the_live_connections_keeps_the_session_recording(
    tmp_path: Path, server: _Server
) -> None:
    """``release_live_async`` hangs up now; a later live request opens a new connection; the
    session's own ``close`` still folds both entries into the cassettes."""
    rr = make_rr(tmp_path, "record")
    async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
        with call_context(CallContext("m", "q1", 0)):
            assert (await client.post(CHAT_PATH, json=_chat())).status_code == 200
        await rr.release_live_async()
        assert await asyncio.to_thread(server.hung_up.wait, HANG_UP_WAIT_S)
        server.hung_up.clear()
        await rr.release_live_async()  # nothing left to release: a no-op
        with call_context(CallContext("m", "q2", 0)):
            assert (await client.post(CHAT_PATH, json=_chat())).status_code == 200
    assert not server.hung_up.is_set()
    await rr.release_live_async()  # the new connection is the recorder's too, and released as well
    assert await asyncio.to_thread(server.hung_up.wait, HANG_UP_WAIT_S)
    rr.close()
    assert len(make_rr(tmp_path, "replay").store.effective_entries()) == 2
