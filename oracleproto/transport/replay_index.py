"""The ``cache/`` index as a replay's hot path: entries by key, plus the whole-set summary.

A replay served from a fresh index parses no YAML: single entries come from the index (each
verified against its digest as it is read), and the facts that need every entry — the Merkle
root of the cassette set, the per-channel counts of the "what replay saves" line — are stored
with the index when it is built. The index is trusted only for the exact cassette bytes it was
built from (its fingerprint); otherwise it is rebuilt from the YAML, which stays the published text.

The build streams: each cassette file is read whole and each entry, verified as soon as its YAML
ends, is written to the index (in batches) and released; the Merkle root and the channel statistics
are assembled from a digest and a few numbers per entry. What a process holds is therefore one
file's bytes and one batch of entries, not the set. With two CPUs the files are shared between this
process and a spawned worker (``parallel_build``); the result is the same as one process's.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from oracleproto.errors import CassetteIntegrityError
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.transport.fileio import locked
from oracleproto.transport.index import CacheIndex
from oracleproto.transport.integrity import merkle_root
from oracleproto.transport.layout import LOCK_FILE, all_cassette_files
from oracleproto.transport.parallel_build import FileIndexed, build_workers, index_file, index_files
from oracleproto.transport.stats import EntryTally, tally_stats

#: Subfolder of the cache root holding one index per cassette set (named by its content).
REPLAY_INDEX_DIR = "replay-index"
#: Cassette sets smaller than this replay from the YAML alone: parsing them takes well under a
#: second, and an index per small set (every test run, the demo) would only fill ``cache/``.
REPLAY_INDEX_MIN_BYTES = 8 << 20


def wants_index(cassette_dir: Path) -> bool:
    """True when a replay of ``cassette_dir`` is worth serving from the index."""
    return sum(p.stat().st_size for p in all_cassette_files(cassette_dir)) >= REPLAY_INDEX_MIN_BYTES


def replay_index_dir(cache_root: Path, fingerprint: dict[str, str]) -> Path:
    """The index folder of one cassette set: named by its fingerprint, so two sets never share one."""
    return cache_root / REPLAY_INDEX_DIR / sha256_hex(canonical_json(fingerprint))[:32]


def is_ready(index: CacheIndex, fingerprint: dict[str, str]) -> bool:
    """True when ``index`` holds exactly these cassette bytes and their replay summary."""
    return index.is_fresh(fingerprint) and index.summary() is not None


def rebuild_for_replay(
    index: CacheIndex, cassette_dir: Path, fingerprint: dict[str, str], *, workers: int | None = None
) -> None:
    """Fill a stale or empty index from the cassette files, a file at a time per process, with its summary.

    The effective entry of a key is the last one read, in the order ``CassetteStore`` loads
    (generations ascending, files sorted), and the root covers every entry of every generation,
    so the index serves and attests exactly what the parsed store would. A build that fails (a
    corrupt entry in any file) leaves no fingerprint behind: the index is never trusted half-built.
    ``workers``: processes to use, this one included (default: up to two, by CPUs and set size;
    see ``parallel_build``); files indexed concurrently are reconciled to that same result.
    """
    with locked(index.cache_dir / LOCK_FILE):
        if is_ready(index, fingerprint):
            return  # another replay of the same cassettes built it meanwhile
        index.clear()  # the fingerprint goes first, so a build cut short is rebuilt next time
        files = all_cassette_files(cassette_dir)
        processes = build_workers(files, workers)
        results = index_files(index, files, processes)
        done: list[FileIndexed] = []
        for found in results:
            if isinstance(found, BaseException):
                # The first failure in load order: the one the sequential build reports, same text.
                raise _without_worker_traceback(found)
            done.append(found)
        if processes > 1:  # one process writes in load order: the last entry of a key is already in
            _settle_shared_keys(index, files, done)
        digests: set[str] = set()
        tallies: dict[str, EntryTally] = {}
        read: dict[str, str] = {}
        for path, facts in zip(files, done, strict=True):
            # The fingerprint of the bytes actually indexed (the caller's was taken before reading).
            read[str(path.relative_to(cassette_dir))] = facts.sha256
            digests.update(facts.digests)
            tallies.update(facts.tallies)  # a later file (generation) overrides
        index.set_fingerprint(read)
        # Summed in key order, as ``channel_stats`` sums the sorted effective entries (same floats).
        stats = tally_stats(tallies[key] for key in sorted(tallies))
        channels = {name: asdict(found) for name, found in stats.items()}
        index.set_summary({"root_digest": merkle_root(digests), "channels": channels})


def _settle_shared_keys(index: CacheIndex, files: list[Path], done: list[FileIndexed]) -> None:
    """Rewrite every key held by more than one file with its entry from the last of them (load order).

    Files indexed concurrently write in no fixed order, so a key a later generation overrides may
    hold either entry; the file that wins is read again for just those keys. A single generation
    holds each key once (one file per channel and model), so this is normally a no-op.
    """
    last: dict[str, int] = {}
    shared: set[str] = set()
    for i, facts in enumerate(done):
        for key in facts.tallies:
            if key in last:
                shared.add(key)
            last[key] = i
    by_file: dict[int, set[str]] = {}
    for key in shared:
        by_file.setdefault(last[key], set()).add(key)
    for i in sorted(by_file):
        again = index_file(index, files[i], only=frozenset(by_file[i]))
        if again.sha256 != done[i].sha256:
            raise CassetteIntegrityError(
                f"{files[i]}: changed while the replay index was built from it; run the replay again "
                "once nothing writes to the cassettes"
            )


def _without_worker_traceback(exc: BaseException) -> BaseException:
    # A worker's error comes back with its remote traceback chained as the cause (an internal
    # detail of the pool); drop that link so the error reads as the sequential build's does.
    if type(exc.__cause__).__name__ == "_RemoteTraceback":
        exc.__cause__ = None
        exc.__suppress_context__ = True
    return exc
