"""One TLS context per test worker for the httpx clients built with httpx's defaults (a pytest plugin).

``httpx.Client()`` and ``httpx.AsyncClient()`` without a transport build an ``ssl.SSLContext`` each,
loading certifi's whole CA bundle (about 20 ms of CPU), and the suite's tests build a few hundred
of them, nearly all to talk plain HTTP to a server on 127.0.0.1 that never uses the context. A
worker builds each distinct default context once, keyed by what httpx reads to build it
(``trust_env``, and with it ``SSL_CERT_FILE`` and ``SSL_CERT_DIR``), and hands the same object to
later clients, as the product's own transports share theirs (``transport/tls.py``). Any other
``verify`` (a context, ``False``, a path) or a client certificate goes to httpx unchanged.

The product's ``transport/tls.py`` calls ``httpx.create_ssl_context`` itself, which this memo does
not replace, so its tests see httpx's own behaviour. ``ORACLEPROTO_TEST_TLS_MEMO=0`` turns the memo
off for a whole session. The memo lives in test workers only; the product, and every child process
a test starts, builds its contexts as before.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.worker_memo import installed

ENV_VAR = "ORACLEPROTO_TEST_TLS_MEMO"


class TlsMemo:
    """httpx's ``create_ssl_context`` with the default verifying contexts kept by what shapes them."""

    def __init__(self, create: Callable[..., ssl.SSLContext]) -> None:
        self.create = create
        self.kept: dict[tuple[bool, str | None, str | None], ssl.SSLContext] = {}
        self.enabled = True

    @staticmethod
    def key(trust_env: bool) -> tuple[bool, str | None, str | None]:
        """What httpx reads to build its default context: the two variables, when it reads them."""
        if not trust_env:
            return (False, None, None)
        return (True, os.environ.get("SSL_CERT_FILE") or None, os.environ.get("SSL_CERT_DIR") or None)

    def __call__(self, verify: Any = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
        if not self.enabled or verify is not True or cert is not None:
            return self.create(verify=verify, cert=cert, trust_env=trust_env)
        key = self.key(trust_env)
        context = self.kept.get(key)
        if context is None:
            context = self.kept[key] = self.create(verify=verify, cert=cert, trust_env=trust_env)
        return context


@pytest.fixture(scope="session", autouse=True)
def _tls_memo() -> Iterator[TlsMemo]:
    from httpx._transports import default

    yield from installed(TlsMemo(default.create_ssl_context), default, "create_ssl_context", ENV_VAR)
