"""Refresh a recorded run: re-execute it live into a NEW run directory, then audit old vs new.

The new run directory starts with a copy of the old run's cassettes (every generation) and
the refresh writes generation max+1 next to them; the old run directory is never written.
Results (DBs, manifest, analysis) belong to the new run, so both runs stay complete and
comparable. The audit is written to the new run's ``analysis/audit/`` after its analysis pass.
The new manifest's ``refresh`` block (refreshed run, generation, selection) makes the refresh
resumable like any run: rerunning it with the same ``--run-id`` redoes only the slots not done.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import DiskFullError, RunStoppedError, StoreError
from oracleproto.primitives.clock import Clock
from oracleproto.refresh.report import build_audit, write_audit
from oracleproto.refresh.selector import Selector
from oracleproto.refresh.views import load_view
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.replay import find_dataset
from oracleproto.runner.resume_guard import check_harness_revision
from oracleproto.runner.stopping import resumable
from oracleproto.runner.stops import with_resume_hint
from oracleproto.settings.model import Settings
from oracleproto.store import RefreshInfo, RunDir, new_run_id
from oracleproto.store.manifest import MANIFEST_NAME
from oracleproto.store.naming import RandomBits
from oracleproto.store.rundir import ANALYSIS_DIR, CASSETTES_DIR, DB_DIR, LOGS_DIR, WRITER_LOCK
from oracleproto.transport.layout import JOURNAL_DIR, LOCK_FILE, list_generations


@dataclass(frozen=True)
class RefreshOptions:
    """One refresh: which run, with which (live) settings, re-recording what."""

    old_run: Path
    settings: Settings
    runs_root: Path
    selector: Selector = field(default_factory=Selector)
    dataset: Path | None = None
    run_id: str | None = None
    progress: bool = True
    #: The analysis pass for the new run (the audit is written after it).
    after: Callable[[RunDir, Settings], None] | None = None


@dataclass(frozen=True)
class RefreshResult:
    """The new run, what the runner did, the audit document and the files it went to."""

    old: RunDir
    new: RunDir
    summary: RunSummary
    audit: dict[str, Any]
    written: tuple[Path, ...]


def _copy_cassettes(source: Path, runs_root: Path, run_id: str) -> None:
    """Create ``runs_root/run_id`` holding a complete copy of ``source`` — or nothing at all."""
    for stale in runs_root.glob(f".{run_id}.refresh-tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)  # a copy an earlier, interrupted start left behind
    tmp = Path(tempfile.mkdtemp(prefix=f".{run_id}.refresh-tmp-", dir=runs_root))
    try:
        # A crash journal or a lock file belongs to a process of the old run, not to the copy.
        shutil.copytree(source, tmp / CASSETTES_DIR, ignore=shutil.ignore_patterns(JOURNAL_DIR, LOCK_FILE))
        tmp.rename(runs_root / run_id)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def resume_arguments(old_run_id: str, selection: list[str], run_id: str) -> str:
    """The command-line arguments that resume refresh ``run_id`` of ``old_run_id``."""
    return " ".join(["--refresh", old_run_id, *(f"--select {c}" for c in selection), "--run-id", run_id])


def _only_the_copy(target: Path) -> bool:
    """True when ``target`` holds the cassette copy and at most the empty folders a run starts with."""
    for child in target.iterdir():
        if child.name in (CASSETTES_DIR, WRITER_LOCK):
            continue
        if child.name not in (DB_DIR, ANALYSIS_DIR, LOGS_DIR) or not child.is_dir() or any(child.iterdir()):
            return False
    return (target / CASSETTES_DIR).is_dir()


def _resume_info(target: Path, old: RunDir, selection: list[str]) -> RefreshInfo | None:
    """The refresh ``target`` was started as, when it is this refresh; else a specific error.

    None means the directory holds only the cassette copy (the earlier start stopped before its
    manifest, hence before any traffic): the refresh starts afresh on that copy.
    """
    manifest_path = target / MANIFEST_NAME
    if not manifest_path.is_file():
        if _only_the_copy(target):
            return None
        raise StoreError(
            f"{target} already exists and is not a run directory; a refresh writes a new run — "
            "pick another --run-id"
        )
    existing = RunDir.open(target).load_manifest()
    info = existing.refresh
    if info is None:
        raise StoreError(f"{target} is an existing run, not a refresh; pick another --run-id for the refresh")
    if info.of != old.run_id:
        raise StoreError(
            f"{target} is a refresh of {info.of}, not of {old.run_id}; pick another --run-id, "
            f"or resume it with --refresh {info.of}"
        )
    if info.selection != selection:
        shown = " ".join(f"--select {c}" for c in info.selection) or "no --select"
        raise StoreError(
            f"{target} is a refresh of {old.run_id} started with {shown}; resume it with the same "
            "selection, or pick another --run-id"
        )
    return info


async def refresh_run(options: RefreshOptions, *, clock: Clock, rand: RandomBits) -> RefreshResult:
    """Re-record ``options.old_run`` into a new run directory (or resume that) and audit the difference."""
    old = RunDir.open(options.old_run)
    manifest = old.load_manifest()
    if manifest.cassettes is None or not old.cassettes_dir.is_dir():
        raise StoreError(
            f"{old.manifest_path}: the run has no cassettes, so there is nothing to refresh against; "
            "record it with `oracleproto run --record` first"
        )
    if manifest.finished_at is None:
        raise StoreError(
            f"{old.manifest_path}: run {old.run_id} has not finished (finished_at is null), so there is no "
            f"complete recording to refresh; resume it first (rerun its command with --run-id {old.run_id})"
        )
    check_harness_revision(manifest, "refresh")
    options.selector.check_against(manifest.models, manifest.filters.question_ids)
    candidates = [p for p in (options.dataset, options.settings.run.source_db) if p is not None]
    source = find_dataset(manifest.hashes.source_db, [*candidates, demo_db_path()])
    run_id = options.run_id or new_run_id(clock, rand)
    if run_id == old.run_id:
        raise StoreError(f"refresh of {old.run_id} needs a new run id; {run_id} is the run being refreshed")
    target = options.runs_root / run_id
    selection = options.selector.describe()
    info = _resume_info(target, old, selection) if target.exists() else None
    if info is None:
        info = RefreshInfo(
            of=old.run_id, generation=max(list_generations(old.cassettes_dir)) + 1, selection=selection
        )
    if not target.exists():
        options.runs_root.mkdir(parents=True, exist_ok=True)
        _copy_cassettes(old.cassettes_dir, options.runs_root, run_id)
    run_options = RunOptions(
        settings=options.settings,
        source_db=source,
        runs_root=options.runs_root,
        mode="refresh",
        run_id=run_id,
        progress=options.progress,
        after=options.after,
        should_refresh=None if options.selector.full else options.selector,
        refresh=info,
    )
    try:
        summary = await execute_run(run_options, clock=clock, rand=rand)
    except RunStoppedError as exc:
        # The runner's hint names --run-id only; a refresh resumes through --refresh as well.
        raise with_resume_hint(
            exc, f"refresh {run_id} of {old.run_id}", resume_arguments(old.run_id, selection, run_id)
        ) from exc
    except DiskFullError as exc:
        shown = str(exc).split("\nrun ", 1)[0]
        hint = resumable(
            f"refresh {run_id} of {old.run_id}",
            again=resume_arguments(old.run_id, selection, run_id),
            fix="free the space",
        )
        raise DiskFullError(f"{shown}\n{hint}", needed_bytes=exc.needed_bytes) from exc
    new = summary.run
    analysis = options.settings.analysis
    audit = build_audit(
        load_view(old.root),
        load_view(new.root),
        convention=analysis.convention,
        bootstrap_samples=analysis.bootstrap_samples,
        seed=analysis.seed,
        selection=options.selector.describe(),
    )
    written = write_audit(audit, new.analysis_dir)
    return RefreshResult(old, new, summary, audit, tuple(written))
