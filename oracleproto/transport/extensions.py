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
