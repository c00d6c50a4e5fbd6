"""Record/replay transport: one content-addressed cache for llm, search and detector traffic.

``RecordReplay`` is the entry point; see ``docs/design.md`` (Record/replay transport) for the
key schema, file format, modes and generations.
"""

from __future__ import annotations

from oracleproto.errors import CassetteIntegrityError, ReplayMissError, SampleContextError
from oracleproto.transport.diff import generation_diff, json_diff
from oracleproto.transport.keys import KEY_SCHEMA_VERSION, Channel
from oracleproto.transport.recorder import Mode, RecordReplay, RefreshPredicate
from oracleproto.transport.stats import CassetteStats, cassette_stats
from oracleproto.transport.store import CassetteStore, rebuild_index

__all__ = [
    "KEY_SCHEMA_VERSION",
    "CassetteIntegrityError",
    "CassetteStats",
    "CassetteStore",
    "Channel",
    "Mode",
    "RecordReplay",
    "RefreshPredicate",
    "ReplayMissError",
    "SampleContextError",
    "cassette_stats",
    "generation_diff",
    "json_diff",
    "rebuild_index",
]
