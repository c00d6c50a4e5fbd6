"""Garbage collection before publishing: drop cassette entries no stored sample used.

Reachability comes from the per-sample entry records (``oracleproto_sample_entries``): an entry of
the newest cassette generation that no stored sample used is garbage — typically left by a session
whose settings changed before a resume. Older generations are a refresh's baseline and are never
touched. The sample attestation is unchanged by construction (only unused entries go); the
manifest's cassette root digest, and ``attestation.json`` when the run has one, are rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from oracleproto.errors import StoreError
from oracleproto.store import RunDir
from oracleproto.store.sample_entries import read_sample_keys
from oracleproto.transport.entry import Entry
from oracleproto.transport.layout import list_generations
from oracleproto.transport.store import CassetteStore, fold_journals, journal_files, remove_entries
from oracleproto.verify.attest import ATTESTATION_NAME, write_attestation


@dataclass(frozen=True)
class GcPlan:
    """What a collection would remove from one run."""

    run: RunDir
    generation: int
    kept: int
    unreachable: tuple[Entry, ...]


def plan_gc(run_dir: Path) -> GcPlan:
    """The entries of the newest generation that no stored sample used (nothing is removed).

    A crash journal left by a killed session is folded into the cassettes first, as a resume would.
    """
    run = RunDir.open(run_dir)
    run.require_idle("collect its garbage")
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
    return GcPlan(run, generation, len(entries) - len(unreachable), unreachable)


def apply_gc(plan: GcPlan) -> int:
    """Remove the plan's entries, then re-seal the manifest (and the attestation); how many went."""
    run = plan.run
    with run.writer_lock():
        manifest = run.load_manifest()
        cassette_dir = run.cassette_path(manifest)
        removed = remove_entries(cassette_dir, plan.generation, {e.key for e in plan.unreachable})
        if manifest.cassettes is not None:
            root = CassetteStore(cassette_dir, writable=False).root_digest()
            cassettes = manifest.cassettes.model_copy(update={"root_digest": root})
            run.write_manifest(manifest.model_copy(update={"cassettes": cassettes}))
        if (run.root / ATTESTATION_NAME).is_file():
            write_attestation(run.root)
    return removed
