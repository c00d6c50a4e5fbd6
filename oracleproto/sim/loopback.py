"""A small threaded HTTP/1.1 server bound to 127.0.0.1, for the simulator and tests.

The handler is a plain function from a request to a response, so servers that speak the
OpenAI or Tavily wire formats are ordinary functions and easy to test. Connections are
real sockets on loopback: clients exercise their real httpx code paths.
"""

from __future__ import annotations

import socket
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class LoopbackRequest:
    """An HTTP request as received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    #: The headers as received: original names, order and repeats (``headers`` folds them).
    raw_headers: tuple[tuple[str, str], ...] = ()


@dataclass
class LoopbackResponse:
    """An HTTP response to send; ``delay_s`` sleeps before sending (latency injection).

    ``drop_connection`` closes the socket without a response (a network failure).
    ``body_sent`` sends only that many body bytes (the headers still announce the full length),
    then closes. ``reset`` makes either close a TCP RST instead of an orderly FIN. ``drip_s``
    sends the body one byte every ``drip_s`` seconds (it stops when the client hangs up).
    """

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})
    delay_s: float = 0.0
    drop_connection: bool = False
    body_sent: int | None = None
    reset: bool = False
    drip_s: float = 0.0


Handler = Callable[[LoopbackRequest], LoopbackResponse]
#: Told of every exchange just before the response leaves (status 0: the connection is dropped):
#: the request, the status, the headers sent and the body bytes sent.
Observer = Callable[[LoopbackRequest, int, list[tuple[str, str]], bytes], None]


class _RequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; without this, Nagle + delayed ACK stall ~40 ms.
    disable_nagle_algorithm = True
    server: _Server

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        request = LoopbackRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw_headers=tuple(self.headers.items()),
        )
        response = self.server.handler(request)
        if response.delay_s:
            time.sleep(response.delay_s)
        observer = self.server.observer
        if response.drop_connection:
            if observer is not None:
                observer(request, 0, [], b"")
            self._hang_up(reset=response.reset)
            return
        # send_response's own two headers, spelled out so that an observer sees exactly what is sent.
        sent = [
            ("Server", self.version_string()),
            ("Date", self.date_time_string()),
            *response.headers.items(),
            ("Content-Length", str(len(response.body))),
        ]
        self.log_request(response.status)
        self.send_response_only(response.status)
        for name, value in sent:
            self.send_header(name, value)
        if observer is not None:
            # Before end_headers flushes anything: the client cannot act on a response (and send
            # the next request of its conversation) before the observer has recorded it.
            observer(request, response.status, sent, response.body[: response.body_sent])
        self.end_headers()
        if response.drip_s > 0:
            for i in range(len(response.body)):
                self.wfile.write(response.body[i : i + 1])
                self.wfile.flush()
                time.sleep(response.drip_s)
            return
        if response.body_sent is None:
            self.wfile.write(response.body)
            return
        self.wfile.write(response.body[: response.body_sent])
        self._hang_up(reset=response.reset)

    def _hang_up(self, *, reset: bool) -> None:
        """End the connection here: an orderly close, or a TCP RST (linger 0) when ``reset``."""
        self.close_connection = True
        if reset:
            self.wfile.flush()
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            # Closing now sends the RST; socketserver's later shutdown/close of it are no-ops.
            self.connection.close()

    # http.server dispatches on these exact names.
    do_GET = _handle  # noqa: N815
    do_POST = _handle  # noqa: N815
    do_PUT = _handle  # noqa: N815
    do_DELETE = _handle  # noqa: N815

    def log_message(self, format: str, *args: object) -> None:
        """Silence per-request logging."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256

    def __init__(self, handler: Handler, port: int = 0, observer: Observer | None = None) -> None:
        super().__init__(("127.0.0.1", port), _RequestHandler)
        self.handler = handler
        self.observer = observer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (timeout, cancelled run, Ctrl-C) is normal; anything else is printed."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class LoopbackServer:
    """Serve ``handler`` on 127.0.0.1 (``port``, default a free one) in a background thread.

    ``observer`` (optional) is told of every exchange, from the thread that serves it.
    """

    def __init__(self, handler: Handler, port: int = 0, observer: Observer | None = None) -> None:
        self._server = _Server(handler, port, observer)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> LoopbackServer:
        """Start serving; returns self."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LoopbackServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
