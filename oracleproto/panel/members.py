"""The members of a panel: located, pinned by their SHA-256, and checked to be one experiment.

A member is a run or shard directory (a path) or a run in a cassette store (materialised and
verified in the local cache, ``objectstore/pull.py``). Its seal is its ``attestation.json`` when
it is sealed, else its ``manifest.json``; the panel file pins that file's SHA-256, and the panel
records the SHA-256 of every per-model DB it takes from the member.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from oracleproto.analysis.reader import read_run
from oracleproto.errors import OracleprotoError
from oracleproto.panel.spec import MemberSpec, PanelError
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.runner.experiment_id import PARTS, ExperimentId
from oracleproto.store import Manifest, RunDir
from oracleproto.store.rundir import PANEL_NAME
from oracleproto.verify.attest import ATTESTATION_NAME

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Member:
    """One located member: its directory, manifest, seal and the digests of its per-model DBs."""

    spec: MemberSpec
    run: RunDir
    manifest: Manifest
    seal: str
    sha256: str
    #: Virtual slug → (DB file name, sha256 of its bytes), in the member's plan order.
    databases: dict[str, tuple[str, str]]
    store_url: str | None = None

    @property
    def run_id(self) -> str:
        """The member's run id."""
        return self.manifest.run_id

    @property
    def label(self) -> str:
        """``run <id> (<how the panel file names it>)``."""
        return f"run {self.run_id} ({self.spec.ref})"


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def seal_of(root: Path) -> tuple[str, str]:
    """The file that seals a run (``attestation.json``, else ``manifest.json``) and its sha256."""
    name = ATTESTATION_NAME if (root / ATTESTATION_NAME).is_file() else "manifest.json"
    return name, file_sha256(root / name)


def member_path(spec: MemberSpec, base: Path) -> Path:
    """A path member's directory: relative paths are taken from the panel file's folder."""
    assert spec.path is not None
    path = Path(spec.path).expanduser()
    return path if path.is_absolute() else base / path


def _from_store(spec: MemberSpec, url: str | None, progress: Progress) -> Path:
    from oracleproto.objectstore.backend import Backend
    from oracleproto.objectstore.cache import ObjectCache, default_cache_dir
    from oracleproto.objectstore.location import store_from
    from oracleproto.objectstore.pull import materialize

    assert spec.store is not None
    backend = Backend(store_from(url, flag="--store"))
    pulled = materialize(backend, spec.store, ObjectCache(default_cache_dir()), progress)
    return pulled.run_dir


def open_member(spec: MemberSpec, base: Path, store_url: str | None, progress: Progress) -> Member:
    """Locate and pin one member; a missing member or a digest mismatch is a :class:`PanelError`."""
    if spec.store is not None:
        try:
            root = _from_store(spec, store_url, progress)
        except OracleprotoError as exc:
            raise PanelError(f"member {spec.ref}: missing from the store or not fetchable: {exc}") from None
    else:
        root = member_path(spec, base)
    try:
        if not root.is_dir():
            raise PanelError(f"member {spec.ref}: missing ({root} is not a directory)")
        run = RunDir.open(root)
        run.require_idle("build the panel")
        manifest = run.load_manifest()
    except PanelError:
        raise
    except OracleprotoError as exc:
        raise PanelError(f"member {spec.ref}: missing or not a run directory: {exc}") from None
    if (run.root / PANEL_NAME).is_file():
        raise PanelError(f"member {spec.ref}: is itself a panel; list its members instead")
    seal, digest = seal_of(run.root)
    if digest != spec.sha256:
        raise PanelError(
            f"member {spec.ref}: sha256 mismatch — the panel file pins {spec.sha256} but its {seal} "
            f"has {digest}; the member changed since the panel file was written (or the digest is of "
            "another file): check the member (`oracleproto verify`) and update the panel file"
        )
    try:
        paths = run.model_db_paths(manifest)
    except OracleprotoError as exc:
        raise PanelError(f"member {spec.ref}: {exc}") from None
    databases: dict[str, tuple[str, str]] = {}
    for slug, path in paths.items():
        wal = path.with_name(path.name + "-wal")
        if wal.is_file() and wal.stat().st_size > 0:
            raise PanelError(
                f"member {spec.ref}: {wal} holds writes not yet in {path.name} (the run was not closed "
                "cleanly); open it once with `oracleproto verify` or resume it, then build the panel"
            )
        databases[slug] = (path.name, file_sha256(path))
    url = store_url if spec.store is not None else None
    return Member(spec, run, manifest, seal, digest, databases, url)


def _experiment_lines(first: Member, other: Member) -> list[str]:
    """The id parts two shards' experiments differ in, named as ``run --experiment`` names them."""
    if first.manifest.experiment is None or other.manifest.experiment is None:
        return []
    a = ExperimentId.parse(first.manifest.experiment.id)
    b = ExperimentId.parse(other.manifest.experiment.id)
    return [
        f"experiment id part '{part}': {a.digests[part]} vs {b.digests[part]} — {PARTS[part]}"
        for part in a.differing(b)
    ]


def _setting_lines(first: Member, other: Member) -> list[str]:
    from oracleproto.leaderboard.identity import differences

    try:
        found = differences(read_run(first.run.root), read_run(other.run.root))
    except OracleprotoError as exc:
        return [f"cannot be compared ({exc})"]
    return [str(d) for d in found]


def refuse_mixed(members: Sequence[Member]) -> None:
    """Refuse members of different experiments, a run given twice, or one model in two members."""
    first = members[0]
    problems: list[str] = []
    seen: dict[str, Member] = {}
    for member in members:
        if member.run_id in seen:
            problems.append(f"{member.label} is also {seen[member.run_id].label}: give each run once")
        seen.setdefault(member.run_id, member)
    for member in members[1:]:
        if member.run_id == first.run_id:
            continue
        lines = _experiment_lines(first, member) + _setting_lines(first, member)
        if lines:
            listed = "\n".join(f"    {line}" for line in lines)
            problems.append(
                f"{member.label} is not of the experiment of {first.label}; it differs in:\n{listed}"
            )
    owner: dict[str, Member] = {}
    for member in members:
        for slug in member.databases:
            if slug in owner and owner[slug].run_id != member.run_id:
                problems.append(
                    f"model {slug} is in {owner[slug].label} and in {member.label}: a panel takes each "
                    "model configuration from one member; leave one of them out"
                )
            owner.setdefault(slug, member)
    if problems:
        raise PanelError(
            "these members cannot form one panel:\n  " + "\n  ".join(problems) + "\nNothing was written."
        )


def member_entry(member: Member, panel_dir: Path) -> dict[str, object]:
    """The member as ``panel.json`` records it (``ref`` locates it; the rest is hashed into the root)."""
    if member.spec.path is not None:
        ref: dict[str, object] = {"path": Path(os.path.relpath(member.run.root, panel_dir)).as_posix()}
    else:
        ref = {"store": member.spec.store, "url": member.store_url}
    return {"ref": ref, **member_leaf(member)}


def member_leaf(member: Member) -> dict[str, object]:
    """What the panel's root commits to for one member (where it is stored is not part of it)."""
    return {
        "run_id": member.run_id,
        "seal": member.seal,
        "sha256": member.sha256,
        "manifest_sha256": file_sha256(member.run.manifest_path),
        "sample_entries_root": member.manifest.sample_entries_root,
        "databases": {slug: {"file": f, "sha256": s} for slug, (f, s) in member.databases.items()},
    }


def leaf_digest(leaf: dict[str, object]) -> str:
    """The Merkle leaf of one member."""
    from oracleproto.primitives.hashing import canonical_json

    return sha256_hex(canonical_json(leaf))
