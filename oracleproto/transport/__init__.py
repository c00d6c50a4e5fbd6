"""Record/replay transport: one content-addressed cache for llm, search and detector traffic.

``RecordReplay`` is the entry point; see ``docs/design/record-replay.md`` for the
key schema, file format, modes and generations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.errors import CassetteIntegrityError, ReplayMissError, SampleContextError
    from oracleproto.transport.diff import generation_diff, json_diff
    from oracleproto.transport.keys import KEY_SCHEMA_VERSION, Channel, RequestSharing
    from oracleproto.transport.recorder import Mode, RecordReplay, RefreshPredicate
    from oracleproto.transport.stats import CassetteStats, cassette_stats
    from oracleproto.transport.store import CassetteStore, rebuild_index

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "CassetteIntegrityError": "oracleproto.errors",
    "ReplayMissError": "oracleproto.errors",
    "SampleContextError": "oracleproto.errors",
    "generation_diff": "oracleproto.transport.diff",
    "json_diff": "oracleproto.transport.diff",
    "KEY_SCHEMA_VERSION": "oracleproto.transport.keys",
    "Channel": "oracleproto.transport.keys",
    "RequestSharing": "oracleproto.transport.keys",
    "Mode": "oracleproto.transport.recorder",
    "RecordReplay": "oracleproto.transport.recorder",
    "RefreshPredicate": "oracleproto.transport.recorder",
    "CassetteStats": "oracleproto.transport.stats",
    "cassette_stats": "oracleproto.transport.stats",
    "CassetteStore": "oracleproto.transport.store",
    "rebuild_index": "oracleproto.transport.store",
}

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
    "RequestSharing",
    "SampleContextError",
    "cassette_stats",
    "generation_diff",
    "json_diff",
    "rebuild_index",
]


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
