"""``view --serve`` hardened: only a loopback Host gets the page, strict headers, idle sockets closed."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from oracleproto.primitives.loopback_http import inline_hashes
from oracleproto.view.serve import ViewServer, serve_in_thread
from tests.browser import ConfinedPage

PAGE = (
    b"<!DOCTYPE html><html><head><style>p{color:red}</style></head>"
    b"<body><p>page</p><script>1</script></body></html>"
)


@pytest.fixture
def served() -> Iterator[ViewServer]:
    server, _ = serve_in_thread(PAGE, idle_timeout=0.5)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _get(server: ViewServer, host: str | None) -> httpx.Response:
    headers = {} if host is None else {"Host": host}
    with httpx.Client(trust_env=False, timeout=10) as client:
        return client.get(server.url, headers=headers)


def _raw(server: ViewServer, request: bytes) -> bytes:
    """Send ``request`` as is (no Host added) and read the whole answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST"])
def test_a_loopback_host_gets_the_page(served: ViewServer, name: str) -> None:
    response = _get(served, f"{name}:{served.port}")
    assert response.status_code == 200
    assert response.content == PAGE


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",  # DNS rebinding: a foreign name resolved to 127.0.0.1
        "evil.example:{port}",
        "127.0.0.1",  # no port: not this server's origin
        "127.0.0.1:{other}",
        "127.0.0.1.evil.example:{port}",
        "",
    ],
)
def test_a_foreign_host_is_refused_before_anything_is_sent(served: ViewServer, host: str) -> None:
    response = _get(served, host.format(port=served.port, other=served.port + 1))
    assert response.status_code == 403
    assert f"answers only to 127.0.0.1:{served.port}" in response.text
    assert b"page" not in response.content
    assert response.headers["x-content-type-options"] == "nosniff"


def test_a_request_without_host_is_refused(served: ViewServer) -> None:
    answer = _raw(served, b"GET / HTTP/1.0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.0 403 ")
    assert b"<p>page</p>" not in answer


def test_the_page_comes_with_a_strict_policy_and_headers(served: ViewServer) -> None:
    response = _get(served, None)
    policy = response.headers["content-security-policy"]
    scripts = inline_hashes(PAGE.decode(), "script")
    assert re.search(r"script-src ([^;]+)", policy).group(1) == " ".join(scripts)  # type: ignore[union-attr]
    assert re.search(r"style-src ([^;]+)", policy).group(1) == " ".join(inline_hashes(PAGE.decode(), "style"))  # type: ignore[union-attr]
    assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
    assert "connect-src 'none'" in policy and "img-src data:" in policy
    assert "unsafe" not in policy and "http" not in policy  # no inline allowance, no external origin
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
    assert response.headers["cache-control"] == "no-store"


@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"POST / HTTP/1.0\r\nHost: {host}\r\nContent-Length: 0\r\n\r\n", b"501"),
        (b"GET /etc/passwd HTTP/1.0\r\nHost: {host}\r\n\r\n", b"404"),
        (b"GET / HTTP/1.0\r\n" + b"X-Many: 1\r\n" * 101 + b"\r\n", b"431"),  # http.server's refusal
    ],
)
def test_other_requests_get_a_short_plain_refusal(
    served: ViewServer, request_bytes: bytes, status: bytes
) -> None:
    answer = _raw(served, request_bytes.replace(b"{host}", f"127.0.0.1:{served.port}".encode()))
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == status
    assert b"content-type: text/plain; charset=utf-8" in head.lower()
    assert b"x-content-type-options: nosniff" in head.lower()
    assert b"<p>page</p>" not in body and b"Traceback" not in body


def test_an_idle_connection_is_closed_and_the_server_goes_on(served: ViewServer) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        # Nothing is sent: the server closes the socket after its idle limit (0.5 s here), so the
        # read ends with EOF; the 10 s socket timeout only guards the test against a hang.
        assert sock.recv(1024) == b""
    assert _get(served, None).status_code == 200


def _frame_host(target: str) -> tuple[ThreadingHTTPServer, str]:
    """Another origin (another port) whose page frames ``target``."""
    html = f'<!DOCTYPE html><iframe id="f" src="{target}"></iframe>'.encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(html)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def test_the_served_demo_runs_under_its_policy_and_cannot_be_framed(
    browser_page: ConfinedPage, demo_page: Path
) -> None:
    page: Any = browser_page.page
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    violations: list[str] = []
    page.on(
        "console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None
    )
    server, url = serve_in_thread(demo_page.read_bytes())
    framer, framer_url = _frame_host(url)
    try:
        page.goto(url)
        page.wait_for_selector("#facts")  # the script ran under the header policy and the meta one
        page.click("#table3_overall a")
        page.wait_for_selector("#questions")
        page.click("#questions a.badge")  # unpacking a sample (DecompressionStream) needs no source
        page.wait_for_selector("#sample")
        assert errors == [] and violations == []

        page.goto(framer_url)
        page.wait_for_selector("#f")
        frame = page.frame_locator("#f")
        assert frame.locator("#facts").count() == 0  # the browser refused to show it in a frame
    finally:
        framer.shutdown()
        framer.server_close()
        server.shutdown()
        server.server_close()
    assert browser_page.network.refused == []
