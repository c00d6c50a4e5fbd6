"""The live pool's cheaper idle check answers as httpcore's does (transport/idle_check.py, tls.py)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpcore
import httpx
import pytest
import trustme

from oracleproto.transport import idle_check, tls

RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


@dataclass
class RawServer:
    """An HTTP/1.1 server on 127.0.0.1 that either keeps each connection or closes it after one reply."""

    close_after_reply: bool
    context: ssl.SSLContext | None = None
    connections: int = 0
    closed: threading.Event = field(default_factory=threading.Event)

    def serve(self, listener: socket.socket) -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return  # the listener was closed: the test is over
            self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, raw: socket.socket) -> None:
        conn = raw if self.context is None else self.context.wrap_socket(raw, server_side=True)
        with conn:
            pending = b""
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                pending += chunk
                while b"\r\n\r\n" in pending:
                    _, pending = pending.split(b"\r\n\r\n", 1)
                    conn.sendall(RESPONSE)
                    if self.close_after_reply:
                        conn.close()
                        self.closed.set()
                        return


@contextmanager
def raw_server(server: RawServer) -> Iterator[str]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    thread = threading.Thread(target=server.serve, args=(listener,), daemon=True)
    thread.start()
    scheme = "http" if server.context is None else "https"
    try:
        yield f"{scheme}://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        listener.shutdown(socket.SHUT_RDWR)
        listener.close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(params=["http", "https"])
def scheme_context(request: pytest.FixtureRequest, ca: trustme.CA) -> ssl.SSLContext | None:
    if request.param == "http":
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    return context


@pytest.fixture
def trusting(
    ca: trustme.CA, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live transports trust the test CA (through ``SSL_CERT_FILE``, as a user would)."""
    bundle = tmp_path_factory.mktemp("ca") / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))


async def _two_gets(
    transport: httpx.AsyncBaseTransport, url: str, between: threading.Event | None
) -> list[bytes]:
    async with httpx.AsyncClient(transport=transport) as client:
        bodies = [(await client.get(url)).content]
        if between is not None:
            assert await asyncio.to_thread(between.wait, 10)
            await asyncio.sleep(0.05)  # the end of stream crosses the loopback
        bodies.append((await client.get(url)).content)
    return bodies


def test_the_live_pool_uses_the_idle_check() -> None:
    pool = tls.live_async_transport()._pool
    assert isinstance(pool, httpcore.AsyncConnectionPool)
    assert isinstance(pool._network_backend, idle_check.IdleCheckBackend)
    assert pool._ssl_context is tls.shared_ssl_context()


@pytest.mark.usefixtures("trusting")
def test_a_connection_the_server_closed_while_idle_is_replaced(scheme_context: ssl.SSLContext | None) -> None:
    """Reused, the closed connection would fail the second request ("Server disconnected")."""
    server = RawServer(close_after_reply=True, context=scheme_context)
    with raw_server(server) as url:
        bodies = asyncio.run(_two_gets(tls.live_async_transport(), url, server.closed))
    assert bodies == [b"ok", b"ok"]
    assert server.connections == 2


@pytest.mark.usefixtures("trusting")
def test_an_open_idle_connection_is_reused(scheme_context: ssl.SSLContext | None) -> None:
    server = RawServer(close_after_reply=False, context=scheme_context)
    with raw_server(server) as url:
        bodies = asyncio.run(_two_gets(tls.live_async_transport(), url, None))
    assert bodies == [b"ok", b"ok"]
    assert server.connections == 1


def test_readability_is_polled_on_the_socket() -> None:
    left, right = socket.socketpair()
    with left, right:
        assert not idle_check.socket_is_readable(left)
        right.sendall(b"x")
        assert idle_check.socket_is_readable(left)
        left.recv(1)
        assert not idle_check.socket_is_readable(left)
        right.close()
        assert idle_check.socket_is_readable(left)  # end of stream
    assert idle_check.socket_is_readable(left)  # closed here: no descriptor
    assert idle_check.socket_is_readable(None)


class _ForeignPool(httpx.AsyncBaseTransport):
    """Stands for a pool a later httpx might keep: not httpcore's connection pool."""


def test_a_transport_whose_pool_is_unknown_stays_httpxs(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[httpx.AsyncHTTPTransport] = []

    class Transport(httpx.AsyncHTTPTransport):
        def __init__(self, **kwargs: object) -> None:
            super().__init__(**kwargs)  # type: ignore[arg-type]
            self._pool = _ForeignPool()  # type: ignore[assignment]
            made.append(self)

    monkeypatch.setattr(tls.httpx, "AsyncHTTPTransport", Transport)
    transport = tls.live_async_transport()
    assert made == [transport]
    assert isinstance(transport._pool, _ForeignPool)
