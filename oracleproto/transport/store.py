"""The cassette set of one run: generations overlaid, crash journal, compaction, index.

Entries are held in memory (or looked up lazily in a fresh ``cache/`` index during
replay). Every new entry is appended to this process's journal at once, so a crash loses
only in-flight calls; compaction rewrites the affected YAML files atomically, sorted by
key, under a file lock, merging what other processes wrote in the meantime.
"""

from __future__ import annotations

import os
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from oracleproto.errors import TransportError
from oracleproto.transport.entry import Entry, entry_digest, to_json_line
from oracleproto.transport.fileio import (
    Journal,
    atomic_write,
    dump_entries,
    locked,
    read_entries,
    read_journal,
    try_claim_orphan,
)
from oracleproto.transport.index import CacheIndex, fingerprint
from oracleproto.transport.integrity import merkle_root
from oracleproto.transport.layout import (
    JOURNAL_DIR,
    LOCK_FILE,
    cassette_files,
    generation_dir,
    list_generations,
    relative_file,
)

FileId = tuple[int, str]


class CassetteStore:
    """Entries of a cassette directory, with thread-safe journaled writes."""

    def __init__(
        self,
        root: Path,
        *,
        writable: bool,
        write_generation: int = 0,
        index: CacheIndex | None = None,
        lazy: bool = False,
    ) -> None:
        self.root = root
        self.writable = writable
        self.write_generation = write_generation
        self.index = index
        self._lock = threading.RLock()
        self._files: dict[FileId, dict[str, Entry]] = {}
        self._effective: dict[str, Entry] = {}
        self._dirty: dict[FileId, dict[str, Entry]] = {}
        self._orphans: list[tuple[Path, Any]] = []
        self._journal: Journal | None = None
        self._loaded = False
        if not lazy:
            self._load()
        if writable:
            self._claim_orphans()
            token = f"{os.getpid()}-{secrets.token_hex(4)}"
            self._journal = Journal(root / JOURNAL_DIR / f"{token}.jsonl")

    # -- reading ---------------------------------------------------------------------------
    def _load(self) -> None:
        for gen in list_generations(self.root):
            gdir = generation_dir(self.root, gen)
            for path in cassette_files(self.root, gen):
                rel = str(path.relative_to(gdir))
                entries = {e.key: e for e in read_entries(path)}
                self._files[(gen, rel)] = entries
                for key, entry in entries.items():
                    self._effective[key] = entry
        self._loaded = True

    def _ensure_loaded(self) -> None:
        with self._lock:
            if not self._loaded:
                self._load()

    def _claim_orphans(self) -> None:
        jdir = self.root / JOURNAL_DIR
        if not jdir.is_dir():
            return
        for path in sorted(jdir.glob("*.jsonl")):
            handle = try_claim_orphan(path)
            if handle is None:
                continue
            for entry in read_journal(path):
                self._stage(entry)
            self._orphans.append((path, handle))

    def get(self, key: str) -> Entry | None:
        """The effective entry for ``key`` (latest generation), if recorded."""
        with self._lock:
            found = self._effective.get(key)
            if found is not None or self._loaded:
                return found
        if self.index is not None:
            return self.index.get(key)
        return None

    def get_in(self, key: str, generation: int) -> Entry | None:
        """The entry for ``key`` stored in exactly ``generation``, if any."""
        self._ensure_loaded()
        with self._lock:
            for (gen, _), entries in self._files.items():
                if gen == generation and key in entries:
                    return entries[key]
        return None

    def get_before(self, key: str, generation: int) -> Entry | None:
        """The latest entry for ``key`` from a generation older than ``generation``."""
        self._ensure_loaded()
        with self._lock:
            found = [e[key] for (gen, _), e in self._files.items() if gen < generation and key in e]
        return max(found, key=lambda e: e.generation, default=None)

    def effective_entries(self) -> list[Entry]:
        """Every effective entry, sorted by key."""
        self._ensure_loaded()
        with self._lock:
            return sorted(self._effective.values(), key=lambda e: e.key)

    def entries_by_generation(self) -> dict[int, list[Entry]]:
        """Entries of each generation as stored (for generation diffs)."""
        self._ensure_loaded()
        out: dict[int, list[Entry]] = {}
        with self._lock:
            for (gen, _), entries in sorted(self._files.items()):
                out.setdefault(gen, []).extend(entries.values())
        return out

    def find(self, predicate: Callable[[Entry], bool]) -> list[Entry]:
        """Effective entries matching ``predicate``."""
        return [e for e in self.effective_entries() if predicate(e)]

    def root_digest(self) -> str:
        """Merkle root over the digests of every entry of every generation."""
        digests = [entry_digest(e) for es in self.entries_by_generation().values() for e in es]
        return merkle_root(digests)

    # -- writing ---------------------------------------------------------------------------
    def _stage(self, entry: Entry) -> None:
        fid = (entry.generation, relative_file(entry))
        with self._lock:
            self._dirty.setdefault(fid, {})[entry.key] = entry
            self._files.setdefault(fid, {})[entry.key] = entry
            current = self._effective.get(entry.key)
            if current is None or current.generation <= entry.generation:
                self._effective[entry.key] = entry

    def put(self, entry: Entry) -> None:
        """Store an entry: in memory, and in the journal before returning."""
        if self._journal is None:
            raise RuntimeError("store opened read-only")
        entry.generation = self.write_generation
        line = to_json_line(entry)
        with self._lock:
            self._stage(entry)
            self._journal.append(line)

    def pending(self) -> int:
        """Entries written since the last compaction."""
        with self._lock:
            return sum(len(v) for v in self._dirty.values())

    def compact(self) -> None:
        """Rewrite dirty files atomically (merging other writers), update index, reset journal."""
        with self._lock:
            if not self._dirty and not self._orphans:
                return
            with locked(self.root / LOCK_FILE):
                written: list[Entry] = []
                for (gen, rel), ours in sorted(self._dirty.items()):
                    path = generation_dir(self.root, gen) / rel
                    merged = {e.key: e for e in read_entries(path)}
                    merged.update(ours)
                    atomic_write(path, dump_entries(merged.values()))
                    self._files[(gen, rel)] = merged
                    for key, entry in merged.items():
                        cur = self._effective.get(key)
                        if cur is None or cur.generation <= entry.generation:
                            self._effective[key] = entry
                    written.extend(ours.values())
                if self.index is not None:
                    self.index.put_many(self._effective[e.key] for e in written)
                    self.index.set_fingerprint(fingerprint(self.root))
                self._dirty.clear()
                if self._journal is not None:
                    self._journal.truncate()
                for path, handle in self._orphans:
                    path.unlink(missing_ok=True)
                    handle.close()
                self._orphans.clear()

    def close(self) -> None:
        """Compact and release the journal."""
        if self.writable:
            self.compact()
        if self._journal is not None:
            self._journal.close(delete=True)
            self._journal = None


def rebuild_index(cassette_dir: Path, cache_dir: Path) -> int:
    """Rebuild ``cache_dir`` from the cassettes (latest generation wins); returns entry count."""
    store = CassetteStore(cassette_dir, writable=False)
    entries = store.effective_entries()
    index = CacheIndex(cache_dir)
    try:
        with locked(cache_dir / LOCK_FILE):
            index.clear()
            index.put_many(entries)
            index.set_fingerprint(fingerprint(cassette_dir))
    finally:
        index.close()
    return len(entries)


def remove_entries(cassette_dir: Path, generation: int, keys: set[str]) -> int:
    """Rewrite one generation's files without ``keys`` (atomically, under the lock); how many went.

    Refused while a crash journal holds entries: they belong to a recording that has not been
    folded in yet (resume it first), and rewriting around them could lose them.
    """
    journal = cassette_dir / JOURNAL_DIR
    if journal.is_dir() and any(p.stat().st_size for p in journal.glob("*.jsonl")):
        raise TransportError(
            f"{journal}: a recording has entries not yet folded into the cassettes; resume it before "
            "removing entries"
        )
    removed = 0
    with locked(cassette_dir / LOCK_FILE):
        for path in cassette_files(cassette_dir, generation):
            entries = read_entries(path)
            kept = [e for e in entries if e.key not in keys]
            if len(kept) == len(entries):
                continue
            removed += len(entries) - len(kept)
            if kept:
                atomic_write(path, dump_entries(kept))
            else:
                path.unlink()
    return removed

