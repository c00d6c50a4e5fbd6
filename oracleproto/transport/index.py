"""The ``cache/`` index: a diskcache map from entry key to entry, built from the cassettes.

It is an accelerator only: it is trusted solely when its fingerprint (sha256 of every
cassette file's bytes) matches the cassettes on disk, and it can always be rebuilt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import diskcache

from oracleproto.hashing import sha256_hex
from oracleproto.transport.entry import Entry, from_interaction, from_json_safe, to_json_line
from oracleproto.transport.layout import all_cassette_files

_FINGERPRINT = "__fingerprint__"


def fingerprint(root: Path) -> dict[str, str]:
    """Relative path → sha256 of the bytes, for every cassette file under ``root``."""
    return {str(p.relative_to(root)): sha256_hex(p.read_bytes()) for p in all_cassette_files(root)}


class CacheIndex:
    """Process-safe (SQLite-backed) key → entry index."""

    def __init__(self, cache_dir: Path) -> None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        self.cache_dir = cache_dir
        self._cache = diskcache.Cache(str(cache_dir), size_limit=2**40, eviction_policy="none")

    def is_fresh(self, current: dict[str, str]) -> bool:
        """True when the index was built from exactly these cassette files."""
        return bool(current) and self._cache.get(_FINGERPRINT) == current

    def get(self, key: str) -> Entry | None:
        """The indexed entry for ``key`` (verified against its digest), if any."""
        line = self._cache.get(f"entry:{key}")
        if line is None:
            return None
        return from_interaction(from_json_safe(json.loads(line)), f"index {self.cache_dir}, entry {key}")

    def put_many(self, entries: Iterable[Entry]) -> None:
        """Index entries in one transaction."""
        with self._cache.transact():
            for entry in entries:
                self._cache.set(f"entry:{entry.key}", to_json_line(entry))

    def set_fingerprint(self, current: dict[str, str]) -> None:
        """Record which cassette files the index now reflects."""
        self._cache.set(_FINGERPRINT, current)

    def clear(self) -> None:
        """Drop everything."""
        self._cache.clear()

    def close(self) -> None:
        """Close the SQLite connection."""
        self._cache.close()
