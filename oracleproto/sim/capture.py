"""``oracleproto sim serve --capture``: every exchange of the simulator, in the capture format.

The capture writer masks the request's credentials (``Authorization`` keeps its scheme, key
headers and a top-level body ``api_key`` become ``<redacted>``). This observer adds what only the
server side knows: the path loses credential query values, and the response loses any echo of
the caller's key (``--echo-key`` puts it in headers and bodies), so no credential reaches the file.
"""

from __future__ import annotations

import json

from oracleproto.conformance.capture import CaptureWriter
from oracleproto.primitives.redact import redact_url, scrub_fragments
from oracleproto.sim.loopback import LoopbackRequest, Observer

_KEY_HEADERS = ("authorization", "proxy-authorization", "x-api-key", "api-key")


def _credentials(request: LoopbackRequest) -> list[str]:
    """Every credential the request presented: key headers (without their scheme) and a body ``api_key``."""
    found: list[str] = []
    for name in _KEY_HEADERS:
        value = request.headers.get(name, "").strip()
        scheme, _, token = value.partition(" ")
        found.extend(v for v in (value, token.strip() or scheme) if v)
    try:
        body = json.loads(request.body)
    except (ValueError, RecursionError):
        body = None
    key = body.get("api_key") if isinstance(body, dict) else None
    if isinstance(key, str) and key:
        found.append(key)
    return found


def capture_observer(writer: CaptureWriter) -> Observer:
    """An observer that writes each exchange the server sends to ``writer``."""

    def observe(request: LoopbackRequest, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        secrets = _credentials(request)
        writer.write(
            method=request.method,
            path=redact_url(request.path, secrets),
            headers=request.raw_headers,
            body=request.body,
            status=status,
            resp_headers=[(name, scrub_fragments(value, secrets)) for name, value in headers],
            resp_body=scrub_fragments(body, secrets),
        )

    return observe
