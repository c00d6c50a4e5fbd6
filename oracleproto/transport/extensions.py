"""Keys of ``httpx`` response extensions the record/replay transport sets.

Both live and replayed responses carry them, so providers read recorded time instead of
the wall clock and replay reproduces latency and timestamps byte for byte.
"""

from __future__ import annotations

#: Latency of the logical call in milliseconds (int), as recorded.
LATENCY_MS = "oracleproto.latency_ms"
#: UTC ISO-8601 timestamp (str) at which the response was recorded.
RECORDED_AT = "oracleproto.recorded_at"
#: Hex cache key (str) of the entry that served the response.
ENTRY_KEY = "oracleproto.entry_key"
#: True when the response came from a stored entry rather than the network.
FROM_CASSETTE = "oracleproto.from_cassette"

#: Attribute set (True) on a transport exception that was replayed from a cassette.
REPLAYED_EXCEPTION_ATTR = "oracleproto_from_cassette"
#: Attributes carrying the entry's ``latency_ms`` (int) and ``recorded_at`` (str) on a transport
#: exception the cache raised, live or replayed: an exception has no response to carry extensions,
#: and its recorded time must reach the provider all the same.
EXCEPTION_LATENCY_ATTR = "oracleproto_latency_ms"
EXCEPTION_RECORDED_AT_ATTR = "oracleproto_recorded_at"


def served_from_cassette(response: object = None, exc: BaseException | None = None) -> bool:
    """True when an outcome was replayed from a cassette.

    A replayed outcome is already the *final* outcome of its logical call (the recording kept
    the retries as audit history), so providers must not retry or back off on it.
    """
    extensions = getattr(response, "extensions", None)
    if isinstance(extensions, dict) and extensions.get(FROM_CASSETTE):
        return True
    return any(getattr(link, REPLAYED_EXCEPTION_ATTR, False) for link in _exception_chain(exc))


def _exception_chain(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and its causes/contexts (SDKs wrap transport errors in their own types)."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def recorded_timing(response: object = None, exc: BaseException | None = None) -> tuple[int, str] | None:
    """``(latency_ms, recorded_at)`` of the entry behind an outcome; None when no entry served it.

    Read from the response extensions, else from the attributes the cache sets on a transport
    exception (found through the exception's causes). Live and replayed outcomes carry the
    same stored values, so record and replay agree.
    """
    extensions = getattr(response, "extensions", None)
    if isinstance(extensions, dict):
        pair = _valid(extensions.get(LATENCY_MS), extensions.get(RECORDED_AT))
        if pair is not None:
            return pair
    for link in _exception_chain(exc):
        latency = getattr(link, EXCEPTION_LATENCY_ATTR, None)
        pair = _valid(latency, getattr(link, EXCEPTION_RECORDED_AT_ATTR, None))
        if pair is not None:
            return pair
    return None


def _valid(latency: object, recorded_at: object) -> tuple[int, str] | None:
    if isinstance(latency, int) and not isinstance(latency, bool) and isinstance(recorded_at, str):
        return latency, recorded_at
    return None
