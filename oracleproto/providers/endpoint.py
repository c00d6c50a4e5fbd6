"""Endpoint URLs of OpenAI-compatible services, and what their error messages must not show."""

from __future__ import annotations

from oracleproto.primitives.redact import url_credentials


def endpoint_url(base_url: str, path: str) -> str:
    """``base_url`` + ``/path``, keeping the base URL's query (``…/v1?x=1`` → ``…/v1/path?x=1``)."""
    base, hash_, fragment = base_url.partition("#")
    base, qmark, query = base.partition("?")
    return f"{base.rstrip('/')}/{path.lstrip('/')}{qmark}{query}{hash_}{fragment}"


def message_secrets(url: str, *keys: str | None) -> set[str]:
    """Everything a provider message must not show: the keys and the URL's credentials."""
    return {k for k in keys if k} | url_credentials(url)
