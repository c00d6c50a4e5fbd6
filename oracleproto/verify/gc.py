"""Garbage collection before publishing: drop cassette entries no stored sample used.

Reachability comes from the per-sample entry records (``oracleproto_sample_entries``): an entry of
the newest cassette generation that no stored sample used is garbage — typically left by a session
whose settings changed before a resume. Older generations are a refresh's baseline and are never
touched. The sample attestation is unchanged by construction (only unused entries go); the
manifest's cassette root digest, and ``attestation.json`` when the run has one, are rewritten.

Crash safety: the rewritten cassette files, the new manifest and the new attestation are staged
together and switched in as one committed step (``verify/switch.py``), so after a kill at any
moment the run holds either its old seal or its new one (a committed switch is finished by the
next ``gc``, ``verify`` or ``bundle export``), and a rerun of ``gc --apply`` completes the job.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from oracleproto.errors import StoreError, TransportError
from oracleproto.store import RunDir
from oracleproto.store.sample_entries import read_sample_keys
from oracleproto.transport.entry import Entry, entry_digest
from oracleproto.transport.fileio import dump_entries, locked, read_entries
from oracleproto.transport.integrity import merkle_root
from oracleproto.transport.layout import JOURNAL_DIR, LOCK_FILE, cassette_files, list_generations
from oracleproto.transport.store import CassetteStore, fold_journals, has_leftover_journal, journal_files
from oracleproto.verify.attest import ATTESTATION_NAME, attestation_text, build_attestation
from oracleproto.verify.switch import finish_interrupted, switch_files

#: How the switch names this command (in messages of a later command that finishes it).
OPERATION = "cassettes gc --apply"


@dataclass(frozen=True)
class GcPlan:
    """What a collection would remove from one run."""

    run: RunDir
    generation: int
    kept: int
    unreachable: tuple[Entry, ...]
    #: The operation of an interrupted switch this plan finished first (its message), if any.
    finished: str | None = None


def plan_gc(run_dir: Path) -> GcPlan:
    """The entries of the newest generation that no stored sample used (nothing is removed).

    An interrupted earlier ``gc --apply`` is finished first (its switch was committed), and a
    crash journal left by a killed session is folded into the cassettes, as a resume would.
    """
    run = RunDir.open(run_dir)
    run.require_idle("collect its garbage")
    finished = finish_interrupted(run)
    manifest = run.load_manifest()
    cassette_dir = run.cassette_path(manifest)
    if journal_files(cassette_dir):
        # A crashed session's entries: fold them in first (what a resume does), so they count.
        with run.writer_lock():
            fold_journals(cassette_dir)
    if manifest.finished_at is None:
        raise StoreError(
            f"run {run.run_id} has not finished: its unfinished samples' entries would look unused; "
            f"resume it first (rerun its command with --run-id {run.run_id})"
        )
    records = read_sample_keys(run.model_db_paths(manifest))
    if records is None:
        raise StoreError(
            f"{run.root}: the run predates per-sample entry records, so which entries are unused is unknown"
        )
    generation = list_generations(cassette_dir)[-1]
    used = {key for keys in records.values() for key in keys}
    entries = CassetteStore(cassette_dir, writable=False).entries_by_generation().get(generation, [])
    unreachable = tuple(sorted((e for e in entries if e.key not in used), key=lambda e: e.key))
    return GcPlan(run, generation, len(entries) - len(unreachable), unreachable, finished)


def apply_gc(plan: GcPlan) -> int:
    """Remove the plan's entries and re-seal the run in one crash-safe switch; how many went."""
    run = plan.run
    keys = {e.key for e in plan.unreachable}
    with run.writer_lock():
        manifest = run.load_manifest()
        cassette_dir = run.cassette_path(manifest)
        if has_leftover_journal(cassette_dir):
            raise TransportError(
                f"{cassette_dir / JOURNAL_DIR}: a recording has entries not yet folded into the cassettes; "
                "resume it before removing entries"
            )
        # The cassette lock too: no fold (a `cache rebuild`, a resume) rewrites a file meanwhile.
        with locked(cassette_dir / LOCK_FILE):
            replace, delete, removed = _rewritten_files(run.root, cassette_dir, plan.generation, keys)
            if not removed:
                return 0
            if manifest.cassettes is not None:
                root = _root_without(cassette_dir, plan.generation, keys)
                cassettes = manifest.cassettes.model_copy(update={"root_digest": root})
                text = manifest.model_copy(update={"cassettes": cassettes}).to_json()
                replace["manifest.json"] = text.encode("utf-8")
            if (run.root / ATTESTATION_NAME).is_file():
                overlay: dict[str, bytes | None] = {**replace, **dict.fromkeys(delete)}
                seal = attestation_text(build_attestation(run.root, overlay))
                replace[ATTESTATION_NAME] = seal.encode("utf-8")
            switch_files(run.root, OPERATION, replace, delete)
    return removed


def _rewritten_files(
    run_root: Path, cassette_dir: Path, generation: int, keys: set[str]
) -> tuple[dict[str, bytes], list[str], int]:
    """The generation's files without ``keys``: new bytes per file, files left empty, entries removed."""
    replace: dict[str, bytes] = {}
    delete: list[str] = []
    removed = 0
    for path in cassette_files(cassette_dir, generation):
        entries = read_entries(path)
        kept = [e for e in entries if e.key not in keys]
        if len(kept) == len(entries):
            continue
        removed += len(entries) - len(kept)
        rel = path.relative_to(run_root).as_posix()
        if kept:
            replace[rel] = dump_entries(kept)
        else:
            delete.append(rel)
    return replace, delete, removed


def _root_without(cassette_dir: Path, generation: int, keys: set[str]) -> str:
    """The Merkle root the cassettes will have without ``keys`` in ``generation`` (a store's order)."""
    by_generation = CassetteStore(cassette_dir, writable=False).entries_by_generation()
    digests = [
        entry_digest(e)
        for gen, entries in by_generation.items()
        for e in entries
        if not (gen == generation and e.key in keys)
    ]
    return merkle_root(digests)
