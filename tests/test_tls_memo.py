"""The suite's per-worker TLS memo: httpx's default context built once per CA location, the rest untouched."""

from __future__ import annotations

import os
import ssl
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme

from tests.tls_memo import ENV_VAR, TlsMemo


class _Builder:
    """httpx's ``create_ssl_context``, counting the contexts it builds."""

    def __init__(self) -> None:
        self.built = 0

    def __call__(self, verify: Any = True, cert: Any = None, trust_env: bool = True) -> ssl.SSLContext:
        self.built += 1
        return httpx.create_ssl_context(verify=verify, cert=cert, trust_env=trust_env)


@pytest.fixture
def no_ca_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)


@pytest.mark.usefixtures("no_ca_variables")
def test_the_default_context_is_built_once_and_verifies_as_httpx_s_own() -> None:
    builder = _Builder()
    memo = TlsMemo(builder)
    first, second = memo(), memo(verify=True, cert=None, trust_env=True)
    assert first is second and builder.built == 1
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname
    assert first.cert_store_stats() == httpx.create_ssl_context().cert_store_stats()


def test_a_ca_variable_gets_a_context_of_its_own(
    no_ca_variables: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memo = TlsMemo(_Builder())
    default = memo()
    bundle = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(bundle))
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    own = memo()
    assert own is not default and memo() is own
    assert own.cert_store_stats()["x509_ca"] == 1
    # Without trust_env httpx ignores the variable, and so does the key.
    assert memo(trust_env=False).cert_store_stats() == default.cert_store_stats()


@pytest.mark.usefixtures("no_ca_variables")
def test_other_arguments_go_to_httpx_every_time() -> None:
    builder = _Builder()
    memo = TlsMemo(builder)
    given = ssl.create_default_context()
    assert memo(verify=given) is given
    unverified = [memo(verify=False), memo(verify=False)]
    assert unverified[0] is not unverified[1] and unverified[0].verify_mode == ssl.CERT_NONE
    assert builder.built == 3


@pytest.mark.usefixtures("no_ca_variables")
def test_switched_off_it_builds_every_time() -> None:
    builder = _Builder()
    memo = TlsMemo(builder)
    memo.enabled = False
    assert memo() is not memo() and builder.built == 2


@pytest.mark.usefixtures("no_ca_variables")
def test_the_suite_s_clients_share_one_context_unless_switched_off() -> None:
    """Installed for the session: two default clients of this worker hold the same context."""
    with httpx.Client() as one, httpx.Client() as two:
        contexts = [client._transport._pool._ssl_context for client in (one, two)]  # type: ignore[attr-defined]
    assert (contexts[0] is contexts[1]) == (os.environ.get(ENV_VAR, "1") != "0")
