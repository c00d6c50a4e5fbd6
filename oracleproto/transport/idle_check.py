"""httpcore's network backend with a cheaper check of whether an idle connection was closed.

Before each request is given a connection, and again when each response closes, httpcore asks
every idle connection of the pool whether its socket is readable (a server that closed a
keep-alive connection leaves it readable, at end of stream). Its anyio stream answers by building
anyio's whole table of socket attributes, a ``getpeername`` system call included, only to take the
raw socket out of it: about ten checks per request in a simulated recording, a tenth of its CPU
time (docs/design/performance.md, "The per-request path"). This backend keeps each
stream's raw socket, found once when the connection opens (and again after its TLS handshake), and
answers the check with one ``poll`` on it, as httpcore's own check does: same question, same answer.
Every other call goes to httpcore's own backend unchanged.
"""

from __future__ import annotations

import select
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore

#: httpcore's socket option form: ``(level, option, value)`` for ``setsockopt``.
SocketOption = tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]


def socket_is_readable(sock: socket.socket | None) -> bool:
    """Whether reading ``sock`` would return at once (data, or the end of a closed connection).

    A socket that is gone (``None``, or closed: no file descriptor) counts as readable, as in
    httpcore, so its connection is dropped rather than reused. httpcore's own function is in its
    private ``_utils`` module: the few lines are written here rather than imported from there.
    """
    fd = -1 if sock is None else sock.fileno()
    if fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


class IdleCheckStream(httpcore.AsyncNetworkStream):
    """One of httpcore's streams, answering ``is_readable`` from a socket looked up once."""

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner
        self._socket: socket.socket | None = inner.get_extra_info("socket")

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        return IdleCheckStream(await self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            return socket_is_readable(self._socket)
        return self._inner.get_extra_info(info)


class IdleCheckBackend(httpcore.AsyncNetworkBackend):
    """httpcore's anyio backend whose streams are :class:`IdleCheckStream`."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend | None = None) -> None:
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_tcp(
            host, port, timeout=timeout, local_address=local_address, socket_options=socket_options
        )
        return IdleCheckStream(stream)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_unix_socket(path, timeout=timeout, socket_options=socket_options)
        return IdleCheckStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)
