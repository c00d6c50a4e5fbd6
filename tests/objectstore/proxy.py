"""A tiny HTTP proxy in front of the S3 server, to inject what a real store does under load.

The test decides per request (``Proxy.rule``): forward it, answer it with a status and body of its
own (503 SlowDown, a 403 echoing the request's credentials), or hold it half-way — a PUT whose body
is half received, a GET whose body is half sent — until the test has killed the client. Headers are
passed through untouched (SigV4 signs the Host header, which stays the proxy's).
"""

from __future__ import annotations

import contextlib
import http.client
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"}
SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


@dataclass
class Request:
    """What the rule sees: method, path, headers, and how many requests came before it."""

    method: str
    path: str
    headers: dict[str, str]
    number: int


@dataclass
class Reply:
    """Answer with this instead of forwarding."""

    status: int
    body: bytes = b""


HOLD = "hold"  # a rule's answer: stop half-way through this request's body (PUT) or response (GET)
FORWARD = "forward"
Rule = Callable[[Request], "Reply | str"]


@dataclass
class Proxy:
    """A running proxy; ``held`` is set once a request is held, ``release`` lets it go."""

    upstream_port: int
    rule: Rule = lambda _: FORWARD
    seen: list[Request] = field(default_factory=list)
    #: (method, path, status) of every request the upstream answered.
    answered: list[tuple[str, str, int]] = field(default_factory=list)
    #: Called with (method, path, status) once the upstream has answered, before the client hears it.
    on_answered: Callable[[str, str, int], None] = lambda *_: None
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    port: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None

    def start(self) -> Proxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _any(self) -> None:
                with contextlib.suppress(OSError, http.client.HTTPException):
                    proxy._serve(self)

            do_GET = do_PUT = do_HEAD = do_POST = do_DELETE = _any  # noqa: N815 - http.server's names

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        headers = dict(handler.headers.items())
        with self._lock:
            request = Request(handler.command, handler.path, headers, len(self.seen))
            self.seen.append(request)
        decision = self.rule(request)
        length = int(headers.get("Content-Length") or headers.get("content-length") or 0)
        if decision == HOLD and handler.command == "PUT":
            handler.rfile.read(length // 2)
            self.held.set()
            self.release.wait(60)
            return
        body = handler.rfile.read(length) if length else b""
        if isinstance(decision, Reply):
            head = handler.command == "HEAD"  # a HEAD answer has no body (it would break the connection)
            self._send(
                handler, decision.status, {"Content-Type": "application/xml"}, decision.body, head=head
            )
            return
        conn = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=30)
        try:
            sent = {k: v for k, v in headers.items() if k.lower() not in _HOP}
            if body or handler.command == "PUT":
                sent["Content-Length"] = str(len(body))
            conn.request(handler.command, handler.path, body=body or None, headers=sent)
            upstream = conn.getresponse()
            data = upstream.read()
            with self._lock:
                self.answered.append((handler.command, handler.path, upstream.status))
            self.on_answered(handler.command, handler.path, upstream.status)
            kept = {k: v for k, v in upstream.getheaders() if k.lower() not in _HOP}
            if handler.command == "HEAD":
                kept["Content-Length"] = upstream.getheader("Content-Length", "0")
        finally:
            conn.close()
        if decision == HOLD:  # a GET: send the headers and half the body, then stall
            handler.send_response(upstream.status)
            for k, v in kept.items():
                handler.send_header(k, v)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data[: len(data) // 2])
            handler.wfile.flush()
            self.held.set()
            self.release.wait(60)
            return
        self._send(handler, upstream.status, kept, data, head=handler.command == "HEAD")

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes, head: bool = False
    ) -> None:
        handler.send_response(status)
        for k, v in headers.items():
            handler.send_header(k, v)
        if not head:
            handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        if not head:
            handler.wfile.write(body)
        handler.wfile.flush()
