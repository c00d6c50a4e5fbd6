"""Turning live exchanges into entries and entries back into httpx responses or exceptions."""

from __future__ import annotations

import threading
from typing import Any

import httpx

from oracleproto.errors import CassetteIntegrityError
from oracleproto.transport import extensions as ext
from oracleproto.transport.entry import Entry
from oracleproto.transport.response_build import ResponseShape, response_shape, shaped_response

#: Status stored for a logical call whose final outcome is a transport exception.
EXCEPTION_STATUS = 0
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%f+00:00"
#: Entries whose normalised response headers are kept (a few hundred bytes each).
RESPONSE_SHAPES = 4096


def exception_record(exc: httpx.TransportError) -> dict[str, str]:
    """An httpx transport exception as data (class name and message)."""
    return {"type": type(exc).__name__, "message": str(exc)}


def exception_class(record: dict[str, str], where: str) -> type[httpx.TransportError]:
    """The httpx exception class named by a stored record (only httpx transport errors)."""
    cls: Any = getattr(httpx, record.get("type", ""), None)
    if not (isinstance(cls, type) and issubclass(cls, httpx.TransportError)):
        raise CassetteIntegrityError(
            f"{where}: stored exception type {record.get('type')!r} is not an httpx transport error"
        )
    return cls


def _shape(entry: Entry) -> ResponseShape:
    headers = [(k, v) for k, values in entry.response_headers.items() for v in values]
    return response_shape(headers, entry.body)


class ResponseShapes:
    """Each served entry's response headers, normalised once (bounded; thread-safe).

    Keyed by the entry's key and the digest verified on load, which covers its headers and
    body; an entry without one (changed since loading, or recorded live) is shaped afresh.
    """

    def __init__(self, limit: int = RESPONSE_SHAPES) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._shapes: dict[tuple[str, str], ResponseShape] = {}

    def shape(self, entry: Entry) -> ResponseShape:
        """The shape of ``entry``'s responses."""
        if entry.digest is None:
            return _shape(entry)
        slot = (entry.key, entry.digest)
        with self._lock:
            found = self._shapes.get(slot)
        if found is None:
            found = _shape(entry)
            with self._lock:
                self._shapes[slot] = found
                if len(self._shapes) > self._limit:
                    del self._shapes[next(iter(self._shapes))]
        return found


def to_response(
    entry: Entry, request: httpx.Request, *, from_cassette: bool, shapes: ResponseShapes | None = None
) -> httpx.Response:
    """The response an entry replays as (also returned for live calls, so both match)."""
    extensions: dict[str, Any] = {
        ext.LATENCY_MS: entry.latency_ms,
        ext.RECORDED_AT: entry.recorded_at,
        ext.ENTRY_KEY: entry.key,
        ext.FROM_CASSETTE: from_cassette,
        "reason_phrase": entry.reason.encode("ascii", "replace"),
    }
    shape = shapes.shape(entry) if shapes is not None else _shape(entry)
    return shaped_response(entry.status, shape, entry.body, extensions=extensions, request=request)


def live_exception(entry: Entry, request: httpx.Request, exc: httpx.TransportError) -> httpx.TransportError:
    """The live exception as the caller may see it: same class, the stored (scrubbed) message."""
    assert entry.exception is not None
    if entry.exception.get("message") == str(exc):
        return exc
    return type(exc)(entry.exception.get("message", ""), request=request)


def replay_exception(entry: Entry, request: httpx.Request, where: str) -> httpx.TransportError:
    """The exception instance an entry with a recorded transport failure replays as."""
    assert entry.exception is not None
    cls = exception_class(entry.exception, where)
    error = cls(entry.exception.get("message", ""), request=request)
    setattr(error, ext.REPLAYED_EXCEPTION_ATTR, True)
    return stamp_exception(error, entry)


def stamp_exception(error: httpx.TransportError, entry: Entry) -> httpx.TransportError:
    """``error`` carrying the entry's latency and timestamp (what extensions carry for a response).

    Set on live exceptions too, right after they are stored, so record and replay hand the
    provider the same values.
    """
    setattr(error, ext.EXCEPTION_LATENCY_ATTR, entry.latency_ms)
    setattr(error, ext.EXCEPTION_RECORDED_AT_ATTR, entry.recorded_at)
    return error


def raw_headers(response: httpx.Response) -> list[tuple[str, str]]:
    """A live response's headers as sent, names and values decoded as HTTP's latin-1."""
    return [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers.raw]
