"""The ``cache/`` index: a diskcache map from entry key to entry, built from the cassettes.

It is an accelerator only: it is trusted solely when its fingerprint (sha256 of every
cassette file's bytes) matches the cassettes on disk, and it can always be rebuilt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import diskcache

from oracleproto.primitives.hashing import sha256_hex
from oracleproto.transport.entry import Entry, from_interaction, from_json_safe, to_json_line
from oracleproto.transport.layout import all_cassette_files

_FINGERPRINT = "__fingerprint__"
#: What a replay needs besides single entries (root digest, savings), tied to one fingerprint.
_SUMMARY = "__summary__"
#: SQLite page cache of the index, in pages (4 KiB each): the B-tree's inner pages and a little more.
INDEX_CACHE_PAGES = 512


def fingerprint(root: Path) -> dict[str, str]:
    """Relative path → sha256 of the bytes, for every cassette file under ``root``."""
    return {str(p.relative_to(root)): sha256_hex(p.read_bytes()) for p in all_cassette_files(root)}


def _untag(value: dict[str, Any]) -> Any:
    # What ``from_json_safe`` does to one mapping.
    if len(value) == 1 and "__bytes_b64__" in value:
        return from_json_safe(value)
    return value


class CacheIndex:
    """Process-safe (SQLite-backed) key → entry index."""

    def __init__(self, cache_dir: Path) -> None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        self.cache_dir = cache_dir
        self._cache = diskcache.Cache(
            str(cache_dir),
            size_limit=2**40,
            eviction_policy="none",
            # diskcache's defaults map up to 64 MiB of the file and cache 8,192 pages (32 MiB): every
            # page a replay reads stayed resident, so memory grew with the run. Entries are read once
            # or twice each (and the store memoises the hot ones): a small page cache loses nothing.
            sqlite_mmap_size=0,
            sqlite_cache_size=INDEX_CACHE_PAGES,
        )

    def is_fresh(self, current: dict[str, str]) -> bool:
        """True when the index was built from exactly these cassette files."""
        return bool(current) and self._cache.get(_FINGERPRINT) == current

    def get(self, key: str) -> Entry | None:
        """The indexed entry for ``key`` (verified against its digest), if any."""
        line = self._cache.get(f"entry:{key}")
        if line is None:
            return None
        # The hook undoes the bytes tagging dict by dict as the C decoder builds them (a walk of
        # the whole tree afterwards, ``from_json_safe``, cost as much as the decoding).
        return from_interaction(json.loads(line, object_hook=_untag), f"index {self.cache_dir}, entry {key}")

    def put_many(self, entries: Iterable[Entry]) -> None:
        """Index entries in one transaction."""
        # Encoded before the transaction: it holds the database's write lock, which a parallel
        # build's other writers wait for (``parallel_build``).
        rows = [(f"entry:{entry.key}", to_json_line(entry)) for entry in entries]
        with self._cache.transact():
            for key, line in rows:
                self._cache.set(key, line)

    def set_fingerprint(self, current: dict[str, str]) -> None:
        """Record which cassette files the index now reflects."""
        self._cache.set(_FINGERPRINT, current)

    def set_summary(self, summary: dict[str, Any]) -> None:
        """Store whole-set facts (root digest, statistics) for the fingerprint now recorded."""
        self._cache.set(_SUMMARY, {**summary, "fingerprint": self._cache.get(_FINGERPRINT)})

    def summary(self) -> dict[str, Any] | None:
        """The stored whole-set facts, when they belong to the recorded fingerprint."""
        found = self._cache.get(_SUMMARY)
        current = self._cache.get(_FINGERPRINT)
        if isinstance(found, dict) and current and found.get("fingerprint") == current:
            return found
        return None

    def clear(self) -> None:
        """Drop everything (the fingerprint and summary first: a clear cut short leaves no trust)."""
        self._cache.delete(_FINGERPRINT)
        self._cache.delete(_SUMMARY)
        self._cache.clear()

    def close(self) -> None:
        """Close the SQLite connection."""
        self._cache.close()
