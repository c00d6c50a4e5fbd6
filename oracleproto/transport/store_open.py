"""Opening a session's cassette store for its record/replay mode (``recorder.RecordReplay``).

A replay with a cache index serves from the index, rebuilt first when stale; a refresh writes a
new generation and resumes knowing which of its entries were copied forward, not recorded live.
"""

from __future__ import annotations

from pathlib import Path

from oracleproto.errors import ConfigError
from oracleproto.transport.entry import is_carried_copy
from oracleproto.transport.index import CacheIndex, fingerprint
from oracleproto.transport.redo import refresh_generation
from oracleproto.transport.replay_index import is_ready, rebuild_for_replay
from oracleproto.transport.store import CassetteStore


def open_store(
    cassette_dir: Path, mode: str, *, cache_dir: Path | None, write_generation: int | None
) -> CassetteStore:
    """The cassette store of a session in ``mode``, with the ``cache_dir`` index when one is given."""
    index = CacheIndex(cache_dir) if cache_dir is not None else None
    current = fingerprint(cassette_dir) if index is not None and mode == "replay" else None
    if index is not None and current is not None and not is_ready(index, current):
        # Stale, empty or without its summary (built by a recording): stream the cassettes into
        # it one file at a time, then serve this replay from it like any later one.
        try:
            rebuild_for_replay(index, cassette_dir, current)
        except BaseException:
            index.close()
            raise
    lazy = current is not None
    write_gen = 0
    if mode == "refresh":
        write_gen = refresh_generation(cassette_dir, write_generation)
    elif write_generation is not None:
        raise ConfigError("write_generation is for refresh mode only (record writes generation 0)")
    return CassetteStore(
        cassette_dir, writable=mode != "replay", write_generation=write_gen, index=index, lazy=lazy
    )


def carried_keys(store: CassetteStore) -> set[str]:
    """Keys of the write generation's entries that an earlier session copied forward, not recorded live."""
    write_gen = store.write_generation
    carried: set[str] = set()
    for entry in store.entries_by_generation().get(write_gen, []):
        if is_carried_copy(entry, store.get_before(entry.key, write_gen)):
            carried.add(entry.key)
    return carried
