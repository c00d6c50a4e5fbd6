"""One TLS context per process for the live transports, built the way httpx builds its default.

``httpx.AsyncHTTPTransport()`` builds a new ``ssl.SSLContext`` each time, loading the whole CA
bundle (about 30 ms of CPU); a run opens a transport per recorder, a panel or a test session many.
A context holds settings and trust roots, not connections, and is safe to share between
transports and threads, so each process builds one per CA location and reuses it. The location
follows httpx's own rule (``SSL_CERT_FILE``, else ``SSL_CERT_DIR``, else certifi's bundle), read
when a transport is made, so a changed variable gets a context of its own.
"""

from __future__ import annotations

import functools
import os
import ssl

import httpcore
import httpx

from oracleproto.errors import ConfigError
from oracleproto.transport.idle_check import IdleCheckBackend


def shared_ssl_context() -> ssl.SSLContext:
    """The verifying TLS context httpx would build now, shared by every transport of this process."""
    return _context_for(os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None)


@functools.cache
def _context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    # httpx reads the same two variables (cert_file first); the arguments key the cache and name
    # the variable in the error (httpx's own says only "no such file").
    try:
        return httpx.create_ssl_context()
    except (OSError, ssl.SSLError) as exc:
        # Only a file is read here (OpenSSL reads an SSL_CERT_DIR folder per handshake): this one or
        # certifi's bundle.
        if cert_file is None:
            raise ConfigError(f"certifi's CA bundle cannot be loaded ({exc}); reinstall certifi") from exc
        raise ConfigError(
            f"SSL_CERT_FILE={cert_file}: the CA certificates there cannot be loaded ({exc}); point it "
            "at a PEM file of CA certificates, or unset it to use certifi's bundle"
        ) from exc


#: httpx's default connection limits, named here because the pool below is built with them too.
LIVE_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)


def live_async_transport() -> httpx.AsyncHTTPTransport:
    """An async transport to the network, with the shared TLS context and the cheap idle check.

    httpx builds its connection pool without a way to pass httpcore a network backend, so the pool
    is built again here with httpx's own arguments plus :class:`IdleCheckBackend`. If a later httpx
    keeps its pool elsewhere, the transport stays httpx's own: slower, never different.
    """
    context = shared_ssl_context()
    transport = httpx.AsyncHTTPTransport(verify=context, limits=LIVE_LIMITS)
    if isinstance(getattr(transport, "_pool", None), httpcore.AsyncConnectionPool):
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=context,
            max_connections=LIVE_LIMITS.max_connections,
            max_keepalive_connections=LIVE_LIMITS.max_keepalive_connections,
            keepalive_expiry=LIVE_LIMITS.keepalive_expiry,
            network_backend=IdleCheckBackend(),
        )
    return transport


def live_sync_transport() -> httpx.HTTPTransport:
    """A sync transport to the network, with the shared TLS context."""
    return httpx.HTTPTransport(verify=shared_ssl_context())
