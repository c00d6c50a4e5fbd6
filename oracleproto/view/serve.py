"""Serve the viewer page on 127.0.0.1 (the same bytes as the file; nothing else is served).

The page holds a whole run, so only this machine's browser, asking for this server by a loopback
name, may read it: a foreign ``Host`` (DNS rebinding) is refused before anything is sent, the page
comes with a policy that lets only its own script run and forbids framing, and a connection that
sends nothing is closed after ``idle_timeout`` seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from oracleproto.primitives.loopback_http import (
    COMMON_HEADERS,
    HOST,
    IDLE_TIMEOUT_S,
    PAGE_HEADERS,
    host_allowed,
    page_policy,
)

#: The viewer needs no fetch; its only images are the plots, embedded as data: URIs.
IMG_SOURCES = "data:"


class ViewServer(ThreadingHTTPServer):
    """A loopback server answering ``GET /`` (and ``/index.html``) with one page; 404 otherwise."""

    # Ctrl-C must not wait for a browser's open connection.
    daemon_threads = True

    def __init__(self, page: bytes, port: int, *, idle_timeout: float = IDLE_TIMEOUT_S) -> None:
        self.page = page
        self.idle_timeout = idle_timeout
        self.csp = page_policy(page.decode("utf-8"), img=IMG_SOURCES)
        super().__init__((HOST, port), ViewRequestHandler)

    @property
    def port(self) -> int:
        """The bound port (the one the OS picked when 0 was asked)."""
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{HOST}:{self.port}/"


class ViewRequestHandler(BaseHTTPRequestHandler):
    """GET and HEAD of the page; every other method, path or host is refused with a short text."""

    server: ViewServer
    # One request per connection: nothing idles between requests.
    protocol_version = "HTTP/1.0"
    server_version = "oracleproto-view"
    sys_version = ""

    def setup(self) -> None:
        """Arm the idle limit before the request line is read (the socket timeout applies to it)."""
        super().setup()
        self.connection.settimeout(self.server.idle_timeout)

    def log_message(self, format: str, *args: object) -> None:
        """Silent: the terminal shows the URL only."""

    def _send(self, status: HTTPStatus, body: bytes, content_type: str, *, page: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in COMMON_HEADERS:
            self.send_header(name, value)
        if page:
            self.send_header("Content-Security-Policy", self.server.csp)
            for name, value in PAGE_HEADERS:
                self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Errors (ours and http.server's: bad request lines, other methods) as short plain text."""
        status = HTTPStatus(code)
        text = f"{status.value} {message or status.phrase}\n"
        self.close_connection = True
        self._send(status, text.encode("utf-8", "replace"), "text/plain; charset=utf-8")

    def do_GET(self) -> None:
        """The page, to a request naming this server by a loopback name."""
        if not host_allowed(self.headers.get("Host"), self.server.port):
            self.send_error(HTTPStatus.FORBIDDEN, f"this server answers only to {HOST}:{self.server.port}")
            return
        if self.path.split("?", 1)[0] not in ("/", "/index.html"):
            self.send_error(HTTPStatus.NOT_FOUND, "only / is served")
            return
        self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8", page=True)

    def do_HEAD(self) -> None:
        """As GET without the body."""
        self.do_GET()


def make_server(page: bytes, port: int, *, idle_timeout: float = IDLE_TIMEOUT_S) -> ViewServer:
    """A loopback server for ``page`` on ``port`` (0: a free one)."""
    return ViewServer(page, port, idle_timeout=idle_timeout)


def serve_forever(page: bytes, port: int, ready: Callable[[str], None]) -> None:
    """Serve until interrupted; ``ready`` gets the URL once the socket listens."""
    server = make_server(page, port)
    try:
        ready(server.url)
        server.serve_forever()
    finally:
        server.server_close()


def serve_in_thread(
    page: bytes, port: int = 0, *, idle_timeout: float = IDLE_TIMEOUT_S
) -> tuple[ViewServer, str]:
    """Start a server in a daemon thread (tests); returns it and its URL. Stop with ``shutdown()``."""
    server = make_server(page, port, idle_timeout=idle_timeout)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.url
