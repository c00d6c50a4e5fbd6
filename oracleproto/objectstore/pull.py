"""``store pull`` and ``--from-store``: fetch what is missing, verify everything, then place it.

Three steps, each safe to kill: (1) every object the index names that the local cache lacks is
downloaded into the cache, verified (``cache.py``); (2) the run is laid out in a staging folder
from the cache and checked against its seal and Merkle root (``assemble.py``); (3) one rename puts
it in place. A rerun after a kill skips the objects already cached, so it downloads only the rest.

``--from-store`` lays the run out once per index under ``<cache>/runs/<index digest>/`` and
re-hashes every file against the index each time it is used, so a damaged or edited copy is
rebuilt from the cache instead of being replayed or verified.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from oracleproto.objectstore.assemble import check_seal, lay_out, place, staging
from oracleproto.objectstore.backend import Backend
from oracleproto.objectstore.cache import ObjectCache, hash_file
from oracleproto.objectstore.errors import ObjectStoreError
from oracleproto.objectstore.index import RunIndex
from oracleproto.objectstore.resolve import ResolvedIndex, resolve_index
from oracleproto.objectstore.transfer import run_all
from oracleproto.primitives import killpoints

Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    pass


@dataclass(frozen=True)
class PulledRun:
    """Where a pulled run is, and what the pull had to download."""

    index: RunIndex
    digest: str
    root: Path  # DEST: run/<run_id>/ and dataset/
    run_dir: Path
    dataset: Path | None
    fetched: int
    fetched_bytes: int
    cached: int


def _names(index: RunIndex) -> dict[str, str]:
    names = {ref.sha256: f"run/{index.run_id}/{rel}" for rel, ref in index.files.items()}
    if index.dataset.name is not None:
        names[index.dataset.sha256] = f"dataset/{index.dataset.name}"
    return names


def fetch_missing(
    backend: Backend, cache: ObjectCache, index: RunIndex, progress: Progress = _quiet
) -> tuple[int, int, int]:
    """Download every object of ``index`` the cache lacks; (fetched, bytes fetched, already cached)."""
    wanted = index.objects()
    names = _names(index)
    cache.prepare()
    missing = [sha for sha in sorted(wanted) if not cache.has(sha, wanted[sha])]
    progress(
        f"fetching {len(missing)} of {len(wanted)} object(s) from {backend.location} "
        f"({sum(wanted[s] for s in missing)} bytes)"
    )

    def fetch(sha: str) -> int:
        got = cache.fetch(backend, sha, wanted[sha], names[sha])
        killpoints.reached("store-get")
        return got

    sizes = run_all(missing, fetch, backend.tuning.jobs)
    return len(missing), sum(sizes), len(wanted) - len(missing)


def _dataset_path(root: Path, index: RunIndex) -> Path | None:
    return None if index.dataset.name is None else root / "dataset" / index.dataset.name


def pull_run(
    backend: Backend, ref: str, dest: Path, cache: ObjectCache, progress: Progress = _quiet
) -> PulledRun:
    """Pull the run ``ref`` names into ``dest`` (new or empty), verified before it is placed."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ObjectStoreError(f"{dest} exists and is not empty; pull into a new or empty folder")
    resolved = resolve_index(backend, ref)
    fetched, fetched_bytes, cached = fetch_missing(backend, cache, resolved.index, progress)
    progress("checking the run against its seal and Merkle root")
    with staging(dest) as tmp:
        run_dir, _ = lay_out(cache, resolved.index, tmp)
        check_seal(run_dir, resolved.index, resolved.digest)
        place(tmp, dest)
    return _pulled(resolved, dest, fetched, fetched_bytes, cached)


def _pulled(resolved: ResolvedIndex, root: Path, fetched: int, fetched_bytes: int, cached: int) -> PulledRun:
    index = resolved.index
    return PulledRun(
        index,
        resolved.digest,
        root,
        root / "run" / index.run_id,
        _dataset_path(root, index),
        fetched,
        fetched_bytes,
        cached,
    )


def _idle_side(path: Path) -> bool:
    """SQLite's files beside a WAL-mode DB that a read-only open leaves and that hold no data: the
    shared-memory index, and an empty write-ahead log (a non-empty one could change what is read)."""
    return path.name.endswith("-shm") or (path.name.endswith("-wal") and path.stat().st_size == 0)


def _intact(root: Path, index: RunIndex) -> bool:
    """Every file of a laid-out run still hashes to the index (nothing edited, nothing added)."""
    run_dir = root / "run" / index.run_id
    expected = {rel: (ref.sha256, ref.size) for rel, ref in index.files.items()}
    present = {
        p.relative_to(run_dir).as_posix() for p in run_dir.rglob("*") if p.is_file() and not _idle_side(p)
    }
    if present != set(expected):
        return False
    if any(hash_file(run_dir / rel) != want for rel, want in expected.items()):
        return False
    dataset = _dataset_path(root, index)
    return dataset is None or hash_file(dataset) == (index.dataset.sha256, index.dataset.size)


def materialize(backend: Backend, ref: str, cache: ObjectCache, progress: Progress = _quiet) -> PulledRun:
    """The run ``ref`` names, laid out in the cache (verified on every use) for replay and verify."""
    resolved = resolve_index(backend, ref)
    dest = cache.root / "runs" / resolved.digest
    if dest.is_dir():
        progress(f"checking the cached copy of run {resolved.index.run_id} against its index")
        if _intact(dest, resolved.index):
            return _pulled(resolved, dest, 0, 0, len(resolved.index.objects()))
        shutil.rmtree(dest)  # damaged or edited: rebuilt below from verified objects
    fetched, fetched_bytes, cached = fetch_missing(backend, cache, resolved.index, progress)
    progress("checking the run against its seal and Merkle root")
    with staging(dest) as tmp:
        run_dir, _ = lay_out(cache, resolved.index, tmp)
        check_seal(run_dir, resolved.index, resolved.digest)
        if dest.exists():  # another process placed it meanwhile: same index, same verified bytes
            return _pulled(resolved, dest, fetched, fetched_bytes, cached)
        place(tmp, dest)
    return _pulled(resolved, dest, fetched, fetched_bytes, cached)
