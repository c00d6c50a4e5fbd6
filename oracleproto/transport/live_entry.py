"""One live attempt as a cassette entry: its attempt record, its history, and the secret scrub.

Pure apart from the clock's readings the recorder passes in; the recorder keeps what needs its
lock (which attempt came first, the store) and this module only shapes and scrubs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from oracleproto.transport.entry import Entry
from oracleproto.transport.outcome import EXCEPTION_STATUS, exception_record
from oracleproto.transport.prepared import PreparedRequest
from oracleproto.transport.scrub import (
    collect_secrets,
    keep_request_headers,
    keep_response_headers,
    public_uri,
    redact_entry,
)


@dataclass(frozen=True, slots=True)
class LiveOutcome:
    """What came back for one live attempt: a response (status, reason, headers, body) or ``exc``."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    exc: httpx.TransportError | None = None

    @classmethod
    def failed(cls, exc: httpx.TransportError) -> LiveOutcome:
        """A transport failure: no status, headers or body."""
        return cls(status=0, reason="", headers=[], body=b"", exc=exc)


def attempt_record(attempt: int, outcome: LiveOutcome, latency_ms: int, stamp: str) -> dict[str, Any]:
    """The attempt's line in the entry's ``attempts`` history."""
    exc = outcome.exc
    return {
        "attempt": attempt,
        "exception": type(exc).__name__ if exc is not None else None,
        "latency_ms": latency_ms,
        "recorded_at": stamp,
        "status": None if exc is not None else outcome.status,
    }


def live_entry(
    prep: PreparedRequest,
    request: httpx.Request,
    outcome: LiveOutcome,
    *,
    previous: Entry | None,
    attempt: dict[str, Any],
    latency_ms: int,
    stamp: str,
) -> Entry:
    """The scrubbed entry for the call's latest attempt; ``previous`` is the call's entry so far.

    ``latency_ms`` runs from the call's first live attempt; every secret the request carried
    (headers, URL, body) is removed from every stored field (``scrub.redact_entry``).
    """
    exc = outcome.exc
    sent_headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw]
    entry = Entry(
        key=prep.key,
        channel=prep.channel,
        request_meta=prep.meta,
        request_body=prep.body_json,
        context=prep.ctx,
        occurrence=prep.occurrence,
        method=request.method,
        uri=public_uri(str(request.url)),
        request_headers=keep_request_headers(sent_headers),
        status=EXCEPTION_STATUS if exc is not None else outcome.status,
        reason=f"transport exception {type(exc).__name__}" if exc is not None else outcome.reason,
        response_headers=keep_response_headers(outcome.headers),
        body=outcome.body,
        exception=exception_record(exc) if exc is not None else None,
        latency_ms=latency_ms,
        recorded_at=stamp,
        attempts=[*previous.attempts, attempt] if previous is not None else [attempt],
        requests=previous.requests if previous is not None else 1,
    )
    secrets = collect_secrets(sent_headers, str(request.url), prep.body, prep.parsed_body)
    return redact_entry(entry, secrets)
