"""``store push``: upload the objects a sealed run needs that the store lacks, then its index.

Order is the crash-safety argument. Objects first, each one atomic under its digest (a killed PUT
leaves nothing under the name); the index last, so a run is listed only once every object it
names is there. A rerun after a kill at any point asks which objects exist and sends only the
rest. Two machines pushing overlapping runs at once need no lock: both write the same bytes under
the same name, the conditional PUT lets one win, and the other counts the object as present.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from oracleproto.objectstore.backend import Backend
from oracleproto.objectstore.errors import DamagedObjectError, ObjectStoreError
from oracleproto.objectstore.index import index_bytes
from oracleproto.objectstore.naming import index_key, object_key
from oracleproto.objectstore.sealed import seal_for_push
from oracleproto.objectstore.transfer import ByteBudget, run_all
from oracleproto.primitives import killpoints
from oracleproto.primitives.hashing import sha256_hex

Progress = Callable[[str], None]


@dataclass(frozen=True)
class PushResult:
    """What a push did."""

    run_id: str
    digest: str  # the index's sha256: the run's root in the store
    objects: int
    uploaded: int
    uploaded_bytes: int
    present: int
    index_written: bool


def _quiet(_: str) -> None:
    pass


def _missing(backend: Backend, wanted: dict[str, int], names: dict[str, str]) -> list[str]:
    def probe(sha: str) -> str | None:
        size = backend.head_size(object_key(sha))
        if size is None:
            return sha
        if size != wanted[sha]:
            raise DamagedObjectError(
                f"store {backend.location}: object {object_key(sha)} ({names[sha]}) holds {size} bytes, the "
                f"file has {wanted[sha]}: the stored object is damaged and objects are never overwritten; "
                "ask the store's owner to delete it, then push again"
            )
        return None

    found = run_all(sorted(wanted), probe, backend.tuning.jobs)
    return [sha for sha in found if sha is not None]


def _upload(backend: Backend, sha: str, path: Path, budget: ByteBudget, size: int) -> bool:
    budget.acquire(size)
    try:
        data = path.read_bytes()
        # The bytes sent are the bytes hashed: a file changed since it was checked would otherwise
        # squat its old name forever (objects are write-once).
        if sha256_hex(data) != sha:
            raise ObjectStoreError(
                f"{path} changed while it was being pushed; push again once nothing writes to it"
            )
        written = backend.put_new(object_key(sha), data)
    finally:
        budget.release(size)
    killpoints.reached("store-put")
    return written


def push_run(
    backend: Backend,
    run_root: Path,
    *,
    dataset: Path | None = None,
    include_dataset: bool = True,
    progress: Progress = _quiet,
) -> PushResult:
    """Push the sealed run at ``run_root``; only missing objects are sent."""
    sealed = seal_for_push(run_root, dataset=dataset, include_dataset=include_dataset, progress=progress)
    index = sealed.index
    wanted = index.objects()
    names = {ref.sha256: rel for rel, ref in index.files.items()}
    if index.dataset.name is not None:
        names[index.dataset.sha256] = f"dataset/{index.dataset.name}"
    progress(f"asking {backend.location} which of {len(wanted)} objects it has")
    missing = _missing(backend, wanted, names)
    progress(f"uploading {len(missing)} missing object(s), {sum(wanted[s] for s in missing)} bytes")
    budget = ByteBudget()
    written = run_all(
        missing,
        lambda sha: _upload(backend, sha, sealed.sources[sha], budget, wanted[sha]),
        backend.tuning.jobs,
    )
    killpoints.reached("store-index")
    data = index_bytes(index)
    digest = sha256_hex(data)
    index_written = backend.put_new(index_key(index.run_id, digest), data)
    return PushResult(
        run_id=index.run_id,
        digest=digest,
        objects=len(wanted),
        uploaded=sum(written),
        uploaded_bytes=sum(wanted[s] for s, w in zip(missing, written, strict=True) if w),
        present=len(wanted) - sum(written),
        index_written=index_written,
    )
