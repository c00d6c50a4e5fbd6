"""Lay a run out of verified cache objects in a staging folder, check its seal, rename it into place.

Layout (the same as ``bundle import``, so the commands that follow are the same)::

    DEST/run/<run_id>/…      every file of the index
    DEST/dataset/<name>      the source DB, when the run was pushed with it

Before the rename: every copy is hashed while it is written (a cache object damaged since it was
fetched is caught here), ``attestation.json`` must be intact and seal exactly the index's files, the
manifest must name the index's run and dataset, and the cassette entries must hash to the
manifest's Merkle root. Only then is the staging folder renamed to DEST (one rename); on any
failure it is removed. A killed pull leaves its staging folder, marked by a lock file beside it that
its process held; the next pull into the same DEST removes folders whose lock is free.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from oracleproto.objectstore.cache import ObjectCache
from oracleproto.objectstore.errors import DamagedObjectError, ObjectStoreError
from oracleproto.objectstore.index import ATTESTATION, RunIndex
from oracleproto.primitives import killpoints
from oracleproto.primitives.fileio import fsync_dir
from oracleproto.primitives.oslock import lock_exclusive
from oracleproto.primitives.paths import confined
from oracleproto.store import RunDir
from oracleproto.verify.attest import load_attestation
from oracleproto.verify.cassettes import check_cassettes

_CHUNK = 1 << 20


def staging_prefix(dest: Path) -> str:
    return f".{dest.name}.pull-"


def remove_stale_staging(dest: Path) -> None:
    """Remove staging folders of pulls into ``dest`` whose process is gone (their lock is free)."""
    if not dest.parent.is_dir():
        return
    for lock_path in sorted(dest.parent.glob(f"{staging_prefix(dest)}*.lock")):
        try:
            handle = open(lock_path, "rb")  # noqa: SIM115 - closed below
        except OSError:
            continue
        with handle:
            try:
                lock_exclusive(handle.fileno(), blocking=False)
            except BlockingIOError:
                continue  # a live pull into the same folder
            shutil.rmtree(lock_path.with_name(lock_path.name.removesuffix(".lock")), ignore_errors=True)
            lock_path.unlink(missing_ok=True)


@contextlib.contextmanager
def staging(dest: Path) -> Iterator[Path]:
    """A locked, empty staging folder beside ``dest``; removed unless it was renamed into place.

    The lock file is created and locked before the folder exists, so every staging folder is
    marked for its whole life; a rerun removes the folders whose lock is free (a killed pull).
    """
    remove_stale_staging(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=staging_prefix(dest), suffix=".lock", dir=dest.parent)
    lock_path = Path(name)
    tmp = lock_path.with_name(lock_path.name.removesuffix(".lock"))
    try:
        lock_exclusive(fd, blocking=False)
        tmp.mkdir()
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # gone already when it was placed
        lock_path.unlink(missing_ok=True)
        os.close(fd)


def _copy_verified(source: Path, target: Path, sha: str, size: int, name: str) -> None:
    digest, got = hashlib.sha256(), 0
    target.parent.mkdir(parents=True, exist_ok=True)
    with source.open("rb") as src, target.open("xb") as out:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            got += len(chunk)
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
    if (digest.hexdigest(), got) != (sha, size):
        source.unlink(missing_ok=True)  # a damaged cache copy: the next pull fetches it again
        raise DamagedObjectError(
            f"the cached copy of {name} ({source}) changed on local disk since it was verified; it was "
            "removed — run the same command again to fetch it anew"
        )


def lay_out(cache: ObjectCache, index: RunIndex, root: Path) -> tuple[Path, Path | None]:
    """Copy every object of ``index`` from the cache into ``root``; (run folder, dataset file)."""
    run_dir = root / "run" / index.run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    for rel, ref in index.files.items():
        target = confined(run_dir, rel, what="run index file")
        _copy_verified(cache.path(ref.sha256), target, ref.sha256, ref.size, f"run/{index.run_id}/{rel}")
    dataset = None
    if index.dataset.name is not None and index.dataset.size is not None:
        dataset = root / "dataset" / index.dataset.name
        _copy_verified(
            cache.path(index.dataset.sha256),
            dataset,
            index.dataset.sha256,
            index.dataset.size,
            str(dataset.name),
        )
    return run_dir, dataset


def _refuse(index: RunIndex, digest: str, what: str) -> DamagedObjectError:
    return DamagedObjectError(
        f"run {index.run_id} (index {digest[:16]}…): {what}; refusing it (nothing was written into place) — "
        "the index or an object was crafted, or the run was pushed from a damaged copy"
    )


def check_seal(run_dir: Path, index: RunIndex, digest: str) -> None:
    """The laid-out run agrees with its seal and its manifest's Merkle root, or nothing is placed."""
    seal, check = load_attestation(run_dir / ATTESTATION)
    if seal is None:
        raise _refuse(index, digest, check.detail)
    attested: dict[str, dict[str, object]] = seal["files"]
    listed = {rel: ref for rel, ref in index.files.items() if rel != ATTESTATION}
    for rel in sorted(set(attested) | set(listed)):
        got, want = listed.get(rel), attested.get(rel)
        if got is None or want is None:
            side = "sealed by attestation.json but not in the index" if got is None else "not sealed"
            raise _refuse(index, digest, f"{rel} is {side}")
        if (got.sha256, got.size) != (want["sha256"], want["size"]):
            raise _refuse(index, digest, f"{rel}: the index and attestation.json disagree on its sha256")
    try:
        manifest = RunDir.open(run_dir).load_manifest()
    except ObjectStoreError:
        raise
    except Exception as exc:  # a manifest the store model refuses: say which run and why
        raise _refuse(index, digest, f"manifest.json is not readable ({exc})") from None
    if manifest.run_id != index.run_id:
        raise _refuse(index, digest, f"manifest.json names run {manifest.run_id}")
    if manifest.hashes.source_db != index.dataset.sha256:
        raise _refuse(index, digest, "the index's dataset is not the manifest's source_db")
    run = RunDir.open(run_dir)
    checks, _ = check_cassettes(run.root, run.cassettes_dir, manifest)
    bad = [c for c in checks if c.status == "FAIL"]
    if bad:
        raise _refuse(index, digest, f"{bad[0].what}: {bad[0].detail}")


def place(tmp: Path, dest: Path) -> None:
    """Rename the checked staging folder to ``dest`` (an absent or empty folder), durably."""
    killpoints.reached("store-place")
    emptied = dest.is_dir() and not any(dest.iterdir())
    if emptied:
        dest.rmdir()
    try:
        tmp.rename(dest)
    except OSError as exc:
        if emptied:
            dest.mkdir()
        raise ObjectStoreError(f"cannot move the pulled run into {dest} ({exc.strerror or exc})") from None
    fsync_dir(dest.parent)  # the rename itself survives a power cut
