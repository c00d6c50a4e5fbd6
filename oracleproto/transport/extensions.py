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


def served_from_cassette(response: object = None, exc: BaseException | None = None) -> bool:
    """True when an outcome was replayed from a cassette.

    A replayed outcome is already the *final* outcome of its logical call (the recording kept
    the retries as audit history), so providers must not retry or back off on it.
    """
    extensions = getattr(response, "extensions", None)
    if isinstance(extensions, dict) and extensions.get(FROM_CASSETTE):
        return True
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if getattr(exc, REPLAYED_EXCEPTION_ATTR, False):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
