"""Building the replay index from several cassette files at once, in worker processes.

A first replay's index build parses and verifies every cassette file (libyaml events, a digest per
entry) and writes each entry into the index: CPU work that is independent per file. With two or
more CPUs the files are shared out — largest first — between this process and ``workers - 1``
spawned worker processes (spawn, never fork: the caller runs inside an asyncio loop and may have
threads). Each file is handled by :func:`index_file` wherever it runs: it writes the file's entries
into the index (diskcache over SQLite is process-safe; one transaction per batch) and hands back a
few facts per entry — the file's sha256, its entry digests, and each key's statistics tally — from
which the caller assembles exactly what the sequential build assembles (``replay_index``).

Workers import only this module's imports (the YAML reader, the index, the statistics tally), not the
agent or the providers: their start-up overlaps this process's first file.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from oracleproto.errors import OracleprotoError
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.primitives.spawning import main_not_rerun
from oracleproto.transport.entry import Entry, entry_digest
from oracleproto.transport.entry_stream import stream_entries
from oracleproto.transport.fileio import read_cassette_bytes
from oracleproto.transport.index import CacheIndex
from oracleproto.transport.stats import EntryTally, entry_tally

#: Entries written to the index per transaction while it is built (a bound on what the build holds).
BUILD_BATCH_ENTRIES = 128
#: Most processes (this one included) a build uses: the project's machines have two cores, and the
#: writers share one SQLite file (one writer at a time).
MAX_BUILD_WORKERS = 2
#: Below this many cassette bytes a build stays in this process: a worker's start-up (≈ 0.3 s wall,
#: 0.17 s CPU measured) would cost more than it saves.
PARALLEL_MIN_BYTES = 4 << 20


@dataclass(frozen=True)
class FileIndexed:
    """What indexing one cassette file yields besides the index rows."""

    #: sha256 of the bytes actually read (the fingerprint of what was indexed).
    sha256: str
    #: The digest of every entry of the file, in file order.
    digests: list[str]
    #: Key → its entry's statistics tally, in file order (each key occurs once per file).
    tallies: dict[str, EntryTally]


def index_file(index: CacheIndex, path: Path, only: frozenset[str] | None = None) -> FileIndexed:
    """Parse and verify one cassette file, writing its entries (or those keyed in ``only``) into ``index``.

    Raises ``CassetteIntegrityError`` naming the file and the entry on the first problem; entries
    before it are already written, so the caller must not trust the index until the build succeeds.
    """
    digests: list[str] = []
    tallies: dict[str, EntryTally] = {}
    batch: list[Entry] = []

    def take(entry: Entry) -> None:
        digests.append(entry_digest(entry))
        tallies[entry.key] = entry_tally(entry)
        if only is None or entry.key in only:
            batch.append(entry)
            if len(batch) >= BUILD_BATCH_ENTRIES:
                index.put_many(batch)
                batch.clear()

    data = read_cassette_bytes(path)
    sha256 = sha256_hex(data)
    stream_entries(data, str(path), take)
    del data
    index.put_many(batch)
    return FileIndexed(sha256, digests, tallies)


def _index_file_in_worker(cache_dir: str, path: str) -> FileIndexed:
    # Runs in a spawned worker: its own connection to the index, closed before the result is sent.
    index = CacheIndex(Path(cache_dir))
    try:
        return index_file(index, Path(path))
    finally:
        index.close()


def build_workers(files: Sequence[Path], requested: int | None = None) -> int:
    """How many processes (this one included) should index ``files``; 1 = sequential."""
    if requested is not None:
        return max(1, min(requested, len(files)))
    if sum(p.stat().st_size for p in files) < PARALLEL_MIN_BYTES:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(MAX_BUILD_WORKERS, cpus, len(files)))


class _Jobs:
    """The files still to index, largest first, shared by this process and the workers' feeders."""

    def __init__(self, files: Sequence[Path]) -> None:
        by_size = sorted(range(len(files)), key=lambda i: (-files[i].stat().st_size, i))
        self._pending = deque(by_size)
        self._changed = threading.Condition(threading.Lock())
        self._in_workers = 0
        self._workers_usable = True
        self._first_failed = len(files)

    def _next(self) -> int | None:
        # Files after a failed one (load order) cannot change which error is reported: skipped.
        while self._pending and self._pending[0] > self._first_failed:
            self._pending.popleft()
        return self._pending.popleft() if self._pending else None

    def take_for_worker(self) -> int | None:
        """The next file for a worker (its position in load order), or None."""
        with self._changed:
            found = self._next() if self._workers_usable else None
            if found is not None:
                self._in_workers += 1
            return found

    def take_for_parent(self) -> int | None:
        """The next file for this process; None once none is left and no worker holds one."""
        with self._changed:
            while True:
                found = self._next()
                if found is not None or self._in_workers == 0:
                    return found
                self._changed.wait()  # a worker may give its file back

    def worker_finished(self, i: int, *, failed: bool) -> None:
        """A worker indexed file ``i`` (or met a problem in it)."""
        with self._changed:
            if failed:
                self._first_failed = min(self._first_failed, i)
            self._in_workers -= 1
            self._changed.notify_all()

    def give_back(self, i: int) -> None:
        """A worker could not index file ``i`` (the pool broke or never started): this process will."""
        with self._changed:
            self._workers_usable = False
            self._pending.appendleft(i)
            self._in_workers -= 1
            self._changed.notify_all()

    def parent_failed(self, i: int) -> None:
        """This process met a problem in file ``i``."""
        with self._changed:
            self._first_failed = min(self._first_failed, i)


def index_files(index: CacheIndex, files: Sequence[Path], workers: int) -> list[FileIndexed | BaseException]:
    """Index every file, ``workers`` processes at a time; per file (load order) its facts or its error.

    After a failure the list ends with it. Every file before a failed one is still attempted, so the
    failure returned is the first in load order — the one a sequential build meets — whichever process
    met it first. A worker that cannot run (no process could be started, one was killed) hands its
    file back to this process. Returns only when every worker process has exited.
    """
    out: list[FileIndexed | BaseException | None] = [None] * len(files)
    if workers <= 1:
        for i, path in enumerate(files):
            try:
                out[i] = index_file(index, path)
            except Exception as exc:  # handed back per file, re-raised by the caller
                out[i] = exc
                break
        return _complete(out)
    jobs = _Jobs(files)
    pool = ProcessPoolExecutor(max_workers=workers - 1, mp_context=multiprocessing.get_context("spawn"))
    try:

        def finished(i: int) -> Callable[[Future[FileIndexed]], None]:
            def done(fut: Future[FileIndexed]) -> None:
                problem = None if fut.cancelled() else fut.exception()
                if fut.cancelled() or (problem is not None and not isinstance(problem, OracleprotoError)):
                    jobs.give_back(i)  # not the file's fault: the pool's (e.g. a killed worker)
                    return
                out[i] = problem or fut.result()
                feed()
                jobs.worker_finished(i, failed=problem is not None)

            return done

        def feed() -> None:
            i = jobs.take_for_worker()
            if i is None:
                return
            try:
                fut = pool.submit(_index_file_in_worker, str(index.cache_dir), str(files[i]))
            except Exception:  # a broken or shut-down pool: this process indexes the file
                jobs.give_back(i)
                return
            fut.add_done_callback(finished(i))

        with main_not_rerun():  # the first submissions start the worker processes
            for _ in range(workers - 1):
                feed()
        while (mine := jobs.take_for_parent()) is not None:
            try:
                out[mine] = index_file(index, files[mine])
            except Exception as exc:  # handed back per file, re-raised by the caller
                out[mine] = exc
                jobs.parent_failed(mine)
    finally:
        # Waits for the worker processes to exit: a failed or interrupted build leaves none behind.
        pool.shutdown(wait=True, cancel_futures=True)
    return _complete(out)


def _complete(out: list[FileIndexed | BaseException | None]) -> list[FileIndexed | BaseException]:
    # Every file's facts, or those before the first failure (load order) and that failure.
    done: list[FileIndexed | BaseException] = []
    for found in out:
        if found is None:  # pragma: no cover — only files after a failure are left out
            raise RuntimeError("a cassette file was not indexed")
        done.append(found)
        if isinstance(found, BaseException):
            break
    return done
