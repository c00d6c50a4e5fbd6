"""A sealed run on disk as a run index: only what its attestation seals, and only if unchanged.

Pushing publishes to a shared bucket, so the gate is ``bundle export``'s: the run must be sealed
(``attestation.json``, which ``verify --write-attestation`` writes only for a run that verifies),
every file must still hash to what the seal says (a run edited after sealing would publish bytes
nobody verified), and no byte may hold a key-like string. Re-verifying the whole run (analysis
regeneration) is not repeated: the seal already says it verified, and the store's readers verify.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from oracleproto.dataset.demo import demo_db_path
from oracleproto.objectstore.errors import ObjectStoreError
from oracleproto.objectstore.index import ATTESTATION, FORMAT, MAX_OBJECT_BYTES, DatasetRef, FileRef, RunIndex
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.store import RunDir
from oracleproto.verify.attest import load_attestation, published_files
from oracleproto.verify.chain import find_dataset
from oracleproto.verify.secret_scan import scan_bytes
from oracleproto.verify.switch import finish_interrupted

Progress = Callable[[str], None]


@dataclass(frozen=True)
class SealedRun:
    """A run ready to push: its index, and where each object's bytes are on disk."""

    index: RunIndex
    sources: dict[str, Path]  # sha256 → a file holding those bytes


def _seal_problem(run: RunDir, what: str) -> ObjectStoreError:
    return ObjectStoreError(
        f"{run.root}: {what}; pushing publishes exactly what the seal covers — run `oracleproto verify "
        f"{run.root}` to see where, and `oracleproto verify {run.root} --write-attestation` to re-seal a "
        "change that is meant"
    )


def _files(run: RunDir) -> dict[str, FileRef]:
    seal_path = run.root / ATTESTATION
    if not seal_path.is_file():
        raise ObjectStoreError(
            f"{run.root} is not sealed (no {ATTESTATION}); seal it with `oracleproto verify {run.root} "
            "--write-attestation` (it seals only a run that verifies), then push"
        )
    seal, check = load_attestation(seal_path)
    if seal is None:
        raise _seal_problem(run, check.detail)
    attested: dict[str, dict[str, object]] = seal["files"]
    present = published_files(run.root)
    extra = sorted(set(present) - set(attested))
    if extra:
        raise _seal_problem(run, f"{len(extra)} file(s) not in the seal, first {extra[0]}")
    files: dict[str, FileRef] = {}
    for rel in sorted(attested):
        path = run.root / rel
        if not path.is_file():
            raise _seal_problem(run, f"{rel} is sealed but missing")
        data = path.read_bytes()
        if sha256_hex(data) != attested[rel]["sha256"]:
            raise _seal_problem(run, f"{rel} changed since the run was sealed")
        files[rel] = FileRef(sha256=sha256_hex(data), size=len(data))
    data = seal_path.read_bytes()
    files[ATTESTATION] = FileRef(sha256=sha256_hex(data), size=len(data))
    return files


def seal_for_push(
    run_root: Path, *, dataset: Path | None, include_dataset: bool, progress: Progress
) -> SealedRun:
    """The run's index and object sources, or a message saying why it cannot be published."""
    run = RunDir.open(run_root)
    run.require_idle("push it")
    finish_interrupted(run)  # a maintenance switch killed after its commit: its seal is the run's
    manifest = run.load_manifest()
    progress("checking every file against the run's seal")
    files = _files(run)
    big = [rel for rel, ref in files.items() if ref.size > MAX_OBJECT_BYTES]
    if big:
        raise ObjectStoreError(
            f"{run.root}: {big[0]} is larger than one object may be ({MAX_OBJECT_BYTES} bytes)"
        )
    wanted = manifest.hashes.source_db
    source = find_dataset(wanted, [dataset] if dataset else [demo_db_path()])
    if source is None and include_dataset:
        raise ObjectStoreError(
            f"no dataset with the run's source_db hash {wanted[:16]}…; pass --dataset PATH with the source "
            "DB the run was recorded on, or --no-dataset to publish only its digest"
        )
    sources = {ref.sha256: run.root / rel for rel, ref in files.items()}
    ref = DatasetRef(sha256=wanted, name=None, size=None)
    if include_dataset and source is not None:
        ref = DatasetRef(sha256=wanted, name=source.name, size=source.stat().st_size)
        sources[wanted] = source
    progress("scanning every byte for secrets")
    named = {rel: run.root / rel for rel in files}
    if ref.name is not None:
        named[f"dataset/{ref.name}"] = sources[wanted]
    hits = [hit for name, path in sorted(named.items()) for hit in scan_bytes(path.read_bytes(), name)]
    if hits:
        listed = "\n".join(f"  - {h}" for h in hits[:20])
        raise ObjectStoreError(
            f"refusing to push: {len(hits)} key-like string(s) found (values not shown):\n{listed}\n"
            "remove or redact them (re-record with a scrubbed transport) before publishing"
        )
    root = manifest.cassettes.root_digest if manifest.cassettes is not None else None
    index = RunIndex(format=FORMAT, run_id=run.run_id, dataset=ref, cassette_root=root, files=files)
    return SealedRun(index, sources)
