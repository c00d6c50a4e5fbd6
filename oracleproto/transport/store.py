"""The cassette set of one run: generations overlaid, crash journal, compaction, index.

Entries are held in memory (or looked up lazily in a fresh ``cache/`` index during
replay). Every new entry is appended to this process's journal at once, so a crash loses
only in-flight calls; compaction rewrites the affected YAML files atomically, sorted by
key, under a file lock, merging what other processes wrote in the meantime.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from oracleproto.errors import DiskFullError, TransportError
from oracleproto.primitives import killpoints
from oracleproto.primitives.fileio import atomic_write, atomic_write_with
from oracleproto.transport.entry import Entry, digest_and_record, entry_digest
from oracleproto.transport.fileio import (
    Journal,
    dump_entries,
    locked,
    read_entries,
    read_journal,
    remove_stale_temps,
    try_claim_orphan,
)
from oracleproto.transport.fold_memo import FoldMemo, rendered_size, reusable, write_reusing
from oracleproto.transport.index import CacheIndex, fingerprint
from oracleproto.transport.integrity import merkle_root
from oracleproto.transport.layout import (
    JOURNAL_DIR,
    LOCK_FILE,
    all_cassette_files,
    cassette_files,
    generation_dir,
    list_generations,
    relative_file,
)

FileId = tuple[int, str]
#: Entries a lazy (index-backed) store keeps decoded: shared search and detector entries are
#: served many times, and a bound keeps a replay's memory flat however large the run. Only those
#: are kept here: a 6 × 80 × 3 run's shared set (2,214 entries, ~5 KB each) then fits, and each is
#: read from the index once, not once per model that reuses it (a 2,048 memo shared with the
#: main-LLM entries read 4,190 entries again, ~0.2 ms each).
INDEX_MEMO_ENTRIES = 4096
#: Main-LLM entries kept: each is served once, then read again by its sample's failure tally
#: when the sample is stored, while at most a few hundred calls of other samples came between.
INDEX_RECENT_LLM_ENTRIES = 256
#: Search/detector entries keyed per call (request_sharing "none") kept, for the same reason: each is
#: served once, then read by the failure tally. Apart from the main-LLM ones, so that a sample's
#: ~25 detector judgements do not push its LLM entries out (nor the shared entries: never kept here).
INDEX_RECENT_PER_CALL_ENTRIES = 512
#: Errnos of a full disk or exhausted quota: a fold that hits one says what to free.
DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
#: Head room asked for on top of the largest file a fold rewrites.
FOLD_MARGIN_BYTES = 1 << 20


def _mib(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB"


def _before_rename() -> None:
    killpoints.reached("fold-write")


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
        self._memo: OrderedDict[str, Entry] = OrderedDict()
        self._recent_llm: OrderedDict[str, Entry] = OrderedDict()
        self._recent_per_call: OrderedDict[str, Entry] = OrderedDict()
        #: Digests of the entries served from the index (a few bytes each, unlike the entries).
        self._digests: dict[str, str] = {}
        self._journal: Journal | None = None
        #: What our folds wrote (the next fold reuses it while the file is unchanged).
        self._fold_memo = FoldMemo()
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
            try:
                entries = read_journal(path)
            except BaseException:
                handle.close()
                raise
            for entry in entries:
                self._stage(entry)
            self._orphans.append((path, handle))

    def get(self, key: str) -> Entry | None:
        """The effective entry for ``key`` (latest generation), if recorded."""
        with self._lock:
            found = self._effective.get(key)
            if found is not None or self._loaded:
                return found
        if self.index is None:
            return None
        with self._lock:
            memo = self._memo.get(key)
            if memo is not None:
                self._memo.move_to_end(key)
                return memo
            memo = self._recent_llm.get(key) or self._recent_per_call.get(key)
            if memo is not None:
                return memo
        found = self.index.get(key)
        if found is not None:
            with self._lock:
                self._digests[key] = entry_digest(found)
                if found.channel == "llm":
                    kept, bound = self._recent_llm, INDEX_RECENT_LLM_ENTRIES
                elif found.occurrence is None:
                    kept, bound = self._memo, INDEX_MEMO_ENTRIES
                else:  # keyed per call (request_sharing "none"): served once, like an llm entry
                    kept, bound = self._recent_per_call, INDEX_RECENT_PER_CALL_ENTRIES
                kept[key] = found
                if len(kept) > bound:
                    kept.popitem(last=False)
        return found

    def digest(self, key: str) -> str | None:
        """The digest of the effective entry for ``key`` (None when not recorded).

        Served from memory when the entry is (its digest was verified as it was read), so the
        per-sample attestation after a replay does not fetch every entry from the index again.
        """
        with self._lock:
            known = self._digests.get(key)
        if known is not None:
            return known
        entry = self.get(key)
        return None if entry is None else entry_digest(entry)

    def adopt_digests(self, digests: Mapping[str, str]) -> None:
        """Digests another process of the same replay verified as it read these entries (a worker's)."""
        with self._lock:
            for key, digest in digests.items():
                self._digests.setdefault(key, digest)

    @property
    def loaded(self) -> bool:
        """False while entries are served from a fresh index without parsing the cassettes."""
        return self._loaded

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
        if not self._loaded and self.index is not None:
            # A fresh index was built from exactly these file bytes and stored their root.
            summary = self.index.summary()
            if summary is not None and isinstance(summary.get("root_digest"), str):
                return str(summary["root_digest"])
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
        entry.digest = None  # the caller may have changed it since it was loaded
        # Kept on the entry, so the fold writes it without encoding and hashing the entry again.
        entry.digest, record = digest_and_record(entry)
        with self._lock:
            self._stage(entry)
            self._journal.append_record(record)

    def pending(self) -> int:
        """Entries written since the last compaction."""
        with self._lock:
            return sum(len(v) for v in self._dirty.values())

    def compact(self, *, last: bool = False) -> None:
        """Rewrite dirty files atomically (merging other writers), update index, reset journal.

        ``last``: no fold follows (the store is closing), so what it writes is not remembered.
        """
        with self._lock:
            if not self._dirty and not self._orphans:
                return
            with locked(self.root / LOCK_FILE):
                # Under the lock no other fold is writing, so any temp copy left is a dead one's.
                remove_stale_temps(self.root)
                written: list[Entry] = []
                for (gen, rel), ours in sorted(self._dirty.items()):
                    path = generation_dir(self.root, gen) / rel
                    same = self._fold_memo.unchanged(path)
                    if same is not None:
                        # The file holds exactly what our last fold wrote, and our view of it is that
                        # plus what was staged since: no parse, and unchanged entries' text is copied.
                        merged = dict(self._files[(gen, rel)])
                        reuse = reusable(same[0], same[1], ours)
                    else:
                        merged = {e.key: e for e in read_entries(path)}
                        reuse = {}
                    merged.update(ours)
                    self._fold_memo.forget(path)
                    try:
                        killpoints.reached("fold")
                        written_now = atomic_write_with(
                            path,
                            # ``last``: no fold follows, so what it writes is not remembered (a sha256).
                            partial(write_reusing, entries=merged.values(), reuse=reuse, remember=not last),
                            before_rename=_before_rename,
                        )
                    except OSError as exc:
                        if exc.errno not in DISK_FULL_ERRNOS:
                            raise
                        raise self._disk_full(path, rendered_size(merged.values(), reuse)) from exc
                    if written_now is not None:
                        self._fold_memo.record(path, written_now)
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
                killpoints.reached("folded")
                if self._journal is not None:
                    self._journal.truncate()
                for path, handle in self._orphans:
                    path.unlink(missing_ok=True)
                    handle.close()
                self._orphans.clear()

    def _disk_full(self, path: Path, size: int) -> DiskFullError:
        """The fold's ENOSPC, with how much to free: the largest file it rewrites, plus a margin."""
        journals = self.root / JOURNAL_DIR
        pending = sum(p.stat().st_size for p in journals.glob("*.jsonl")) if journals.is_dir() else 0
        largest = max((p.stat().st_size for p in all_cassette_files(self.root)), default=0)
        needed = max(size, largest + pending) + FOLD_MARGIN_BYTES
        return DiskFullError(
            f"no space left on the device holding {self.root} while folding the crash journal "
            f"({JOURNAL_DIR}/) into {path.name}: the fold rewrites each cassette file through a temp "
            f"copy, so it needs about {_mib(needed)} free there; free at least that much on that "
            f"filesystem (or raise its quota). Nothing is lost: every recorded entry stays in "
            f"{journals} until a fold succeeds",
            needed_bytes=needed,
        )

    def close(self) -> None:
        """Compact and release the journal.

        When the compaction fails (a full disk), every journal is kept and released, so the next
        writer claims them: nothing recorded is lost.
        """
        try:
            if self.writable:
                self.compact(last=True)
        except BaseException:
            # The fold's error says what filled up and what to free; releasing the journals on that
            # same full disk can fail too (flushing a buffered line) and must not replace it.
            with contextlib.suppress(OSError):
                self._release(delete=False)
            raise
        self._release(delete=True)

    def _release(self, *, delete: bool) -> None:
        """Close our journal (deleting it only when folded) and the claimed orphans' handles."""
        if self._journal is not None:
            self._journal.close(delete=delete)
            self._journal = None
        for _, handle in self._orphans:
            handle.close()
        self._orphans.clear()


def journal_files(cassette_dir: Path) -> list[Path]:
    """Crash journals in ``cassette_dir`` (a live writer's, or a dead one's not folded yet)."""
    journal = cassette_dir / JOURNAL_DIR
    return sorted(journal.glob("*.jsonl")) if journal.is_dir() else []


def has_leftover_journal(cassette_dir: Path) -> bool:
    """True when a journal holds entries not folded into the cassette files yet."""
    return any(p.stat().st_size for p in journal_files(cassette_dir))


def fold_journals(cassette_dir: Path) -> CassetteStore:
    """Fold every journal no live process holds into the cassette files; returns the entries.

    This is what a resume does first: a recorder killed between its last sample and its own
    fold left every entry in its journal only. The returned store is closed (read it, never
    write to it).
    """
    store = CassetteStore(cassette_dir, writable=True)
    store.close()
    return store


def open_entries(cassette_dir: Path) -> CassetteStore:
    """The cassette set for reading, with any leftover journal folded in first."""
    if journal_files(cassette_dir):
        return fold_journals(cassette_dir)
    return CassetteStore(cassette_dir, writable=False)


def rebuild_index(cassette_dir: Path, cache_dir: Path) -> int:
    """Rebuild ``cache_dir`` from the cassettes (latest generation wins); returns entry count.

    A leftover crash journal is folded in first, so the index never misses its entries; a
    folder with no entries at all is refused (an empty index is a wrong path, not a cache).
    """
    store = open_entries(cassette_dir)
    entries = store.effective_entries()
    if not entries:
        raise TransportError(
            f"{cassette_dir}: no cassette entries (no *.yaml files, no crash journal) — nothing to index; "
            "pass a run directory or its cassettes/ folder"
        )
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
    if has_leftover_journal(cassette_dir):
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
