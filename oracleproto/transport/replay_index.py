"""The ``cache/`` index as a replay's hot path: entries by key, plus the whole-set summary.

A replay served from a fresh index parses no YAML: single entries come from the index (each
verified against its digest as it is read), and the facts that need every entry — the Merkle
root of the cassette set, the per-channel counts of the "what replay saves" line — are stored
with the index when it is built. The index is trusted only for the exact cassette bytes it was
built from (its fingerprint); otherwise it is rebuilt from the YAML, which stays the published text.

The build streams: the cassette files are read one at a time and each entry, verified as soon as
its YAML ends, is written to the index (in batches) and released; the Merkle root and the channel
statistics are accumulated from a digest and a few numbers per entry. What a first replay holds is
therefore one file's bytes and one batch of entries, not the set.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from oracleproto.hashing import canonical_json, sha256_hex
from oracleproto.transport.entry import Entry, entry_digest
from oracleproto.transport.entry_stream import stream_entries
from oracleproto.transport.fileio import locked, read_cassette_bytes
from oracleproto.transport.index import CacheIndex
from oracleproto.transport.integrity import merkle_root
from oracleproto.transport.layout import LOCK_FILE, all_cassette_files
from oracleproto.transport.stats import EntryTally, entry_tally, tally_stats

#: Subfolder of the cache root holding one index per cassette set (named by its content).
REPLAY_INDEX_DIR = "replay-index"
#: Cassette sets smaller than this replay from the YAML alone: parsing them takes well under a
#: second, and an index per small set (every test run, the demo) would only fill ``cache/``.
REPLAY_INDEX_MIN_BYTES = 8 << 20
#: Entries written to the index per transaction while it is built (a bound on what the build holds).
BUILD_BATCH_ENTRIES = 256


def wants_index(cassette_dir: Path) -> bool:
    """True when a replay of ``cassette_dir`` is worth serving from the index."""
    return sum(p.stat().st_size for p in all_cassette_files(cassette_dir)) >= REPLAY_INDEX_MIN_BYTES


def replay_index_dir(cache_root: Path, fingerprint: dict[str, str]) -> Path:
    """The index folder of one cassette set: named by its fingerprint, so two sets never share one."""
    return cache_root / REPLAY_INDEX_DIR / sha256_hex(canonical_json(fingerprint))[:32]


def is_ready(index: CacheIndex, fingerprint: dict[str, str]) -> bool:
    """True when ``index`` holds exactly these cassette bytes and their replay summary."""
    return index.is_fresh(fingerprint) and index.summary() is not None


def rebuild_for_replay(index: CacheIndex, cassette_dir: Path, fingerprint: dict[str, str]) -> None:
    """Fill a stale or empty index from the cassette files, one file at a time, with its summary.

    The effective entry of a key is the last one read, in the order ``CassetteStore`` loads
    (generations ascending, files sorted), and the root covers every entry of every generation,
    so the index serves and attests exactly what the parsed store would. A build that fails (a
    corrupt entry in any file) leaves no fingerprint behind: the index is never trusted half-built.
    """
    with locked(index.cache_dir / LOCK_FILE):
        if is_ready(index, fingerprint):
            return  # another replay of the same cassettes built it meanwhile
        index.clear()  # the fingerprint goes first, so a build cut short is rebuilt next time
        digests: set[str] = set()
        tallies: dict[str, EntryTally] = {}
        read: dict[str, str] = {}
        batch: list[Entry] = []

        def take(entry: Entry) -> None:
            digests.add(entry_digest(entry))
            tallies[entry.key] = entry_tally(entry)  # a later file (generation) overrides
            batch.append(entry)
            if len(batch) >= BUILD_BATCH_ENTRIES:
                index.put_many(batch)
                batch.clear()

        for path in all_cassette_files(cassette_dir):
            data = read_cassette_bytes(path)
            # The fingerprint of the bytes actually indexed (the caller's was taken before reading).
            read[str(path.relative_to(cassette_dir))] = sha256_hex(data)
            stream_entries(data, str(path), take)
            del data
            index.put_many(batch)
            batch.clear()
        index.set_fingerprint(read)
        # Summed in key order, as ``channel_stats`` sums the sorted effective entries (same floats).
        stats = tally_stats(tallies[key] for key in sorted(tallies))
        channels = {name: asdict(found) for name, found in stats.items()}
        index.set_summary({"root_digest": merkle_root(digests), "channels": channels})
