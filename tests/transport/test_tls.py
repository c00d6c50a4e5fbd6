"""The live transports share one verifying TLS context per process and CA location (transport/tls.py)."""

from __future__ import annotations

import re
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
import trustme

from oracleproto.errors import ConfigError
from oracleproto.transport import tls


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def https_server(ca: trustme.CA) -> Iterator[str]:
    """An HTTPS server on 127.0.0.1 whose certificate only ``ca`` signs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _get(url: str) -> httpx.Response:
    with httpx.Client(transport=tls.live_sync_transport()) as client:
        return client.get(url)


def test_transports_share_one_context_that_verifies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    first, second = tls.shared_ssl_context(), tls.shared_ssl_context()
    assert first is second
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname
    # The trust roots httpx itself would load (certifi's bundle).
    assert first.cert_store_stats() == httpx.create_ssl_context().cert_store_stats()


def test_a_server_no_trusted_ca_signed_is_refused(https_server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        _get(https_server)


def test_ssl_cert_file_is_honoured_with_a_context_of_its_own(
    ca: trustme.CA, https_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    default = tls.shared_ssl_context()
    bundle = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    assert tls.shared_ssl_context() is not default
    response = _get(https_server)
    assert (response.status_code, response.content) == (200, b"hello")
    # The async transport (what a run's recorder opens) takes the same context.
    pool_context = tls.live_async_transport()._pool._ssl_context
    assert pool_context is tls.shared_ssl_context()


@pytest.mark.parametrize("content", [None, b"not a certificate\n"], ids=["missing", "not-pem"])
def test_a_ca_file_that_cannot_be_loaded_is_named(
    content: bytes | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = tmp_path / "ca.pem"
    if content is not None:
        bundle.write_bytes(content)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    with pytest.raises(
        ConfigError, match=rf"^SSL_CERT_FILE={re.escape(str(bundle))}: the CA certificates there"
    ):
        tls.live_async_transport()
