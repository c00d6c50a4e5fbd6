"""S3 credentials and endpoint, from the environment only (never a file, never the command line).

The documented set, the AWS CLI's own names so existing setups work:

* ``AWS_ACCESS_KEY_ID`` + ``AWS_SECRET_ACCESS_KEY`` (both or neither), optional ``AWS_SESSION_TOKEN``;
  without them requests are anonymous (a public bucket): no instance-metadata lookup is tried,
  because that is a network call to a link-local address the user did not ask for;
* ``AWS_REGION`` or ``AWS_DEFAULT_REGION`` (default ``us-east-1``);
* ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL`` for S3-compatible servers (MinIO, Ceph, R2, moto);
  plain ``http://`` only for a loopback endpoint or with ``AWS_ALLOW_HTTP=true`` (a key signed over
  plain HTTP to another machine can be replayed by anyone on the path).

``secrets`` lists every credential value so that each message can be scrubbed of it (a server may
echo the access key id in a 403 body; a proxy may echo the session token).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from oracleproto.objectstore.errors import ObjectStoreError
from oracleproto.primitives.redact import redact_url

KEY_ID = "AWS_ACCESS_KEY_ID"
SECRET = "AWS_SECRET_ACCESS_KEY"
TOKEN = "AWS_SESSION_TOKEN"
ENDPOINTS = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
REGIONS = ("AWS_REGION", "AWS_DEFAULT_REGION")
ALLOW_HTTP = "AWS_ALLOW_HTTP"


@dataclass(frozen=True)
class S3Access:
    """What an S3 client needs from the environment, and the values no message may show."""

    region: str
    endpoint: str | None
    allow_http: bool
    key_id: str | None = field(repr=False)
    secret: str | None = field(repr=False)
    token: str | None = field(repr=False)

    @property
    def anonymous(self) -> bool:
        return self.key_id is None

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(v for v in (self.key_id, self.secret, self.token) if v)


def _loopback(host: str | None) -> bool:
    if host in ("localhost",):
        return True
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _endpoint(env: Mapping[str, str]) -> tuple[str | None, bool]:
    for name in ENDPOINTS:
        value = env.get(name, "").strip()
        if not value:
            continue
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ObjectStoreError(f"{name}={redact_url(value)!r}: expected http(s)://HOST[:PORT]")
        if parts.username or parts.password or parts.query:
            raise ObjectStoreError(
                f"{name}: credentials do not go in the endpoint URL; set {KEY_ID} and {SECRET}"
            )
        http_ok = env.get(ALLOW_HTTP, "").strip().lower() in ("1", "true", "yes")
        if parts.scheme == "http" and not (_loopback(parts.hostname) or http_ok):
            raise ObjectStoreError(
                f"{name}={redact_url(value)!r} is plain HTTP to another machine: signed requests could be "
                f"replayed by anyone on the path; use https, or set {ALLOW_HTTP}=true if the network is yours"
            )
        return value.rstrip("/"), parts.scheme == "http"
    return None, False


def s3_access(env: Mapping[str, str]) -> S3Access:
    """Read the documented variables; a half-set pair is an error naming the missing one."""
    key_id = env.get(KEY_ID, "").strip() or None
    secret = env.get(SECRET, "").strip() or None
    if (key_id is None) != (secret is None):
        missing = SECRET if secret is None else KEY_ID
        raise ObjectStoreError(
            f"{missing} is not set but {KEY_ID if secret is None else SECRET} is: set both (or neither, for "
            "anonymous access to a public bucket)"
        )
    region = next((env[n].strip() for n in REGIONS if env.get(n, "").strip()), "us-east-1")
    endpoint, allow_http = _endpoint(env)
    return S3Access(
        region=region,
        endpoint=endpoint,
        allow_http=allow_http,
        key_id=key_id,
        secret=secret,
        token=env.get(TOKEN, "").strip() or None,
    )


#: What to say when retries ran out (the variables that change them live in ``tuning.py``).
RETRIES_HINT = "CASSETTE_STORE_RETRIES and CASSETTE_STORE_RETRY_TIMEOUT_S allow more"
