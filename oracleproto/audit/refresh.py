"""Refresh a recorded run: re-execute it live into a NEW run directory, then audit old vs new.

The new run directory starts with a copy of the old run's cassettes (every generation) and
the refresh writes generation max+1 next to them; the old run directory is never written.
Results (DBs, manifest, analysis) belong to the new run, so both runs stay complete and
comparable. The audit is written to the new run's ``analysis/`` after its analysis pass.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracleproto.audit.report import build_audit, write_audit
from oracleproto.audit.selector import Selector
from oracleproto.audit.views import load_view
from oracleproto.clock import Clock
from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import AuthError, ErrorKind, StoreError
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.replay import find_dataset
from oracleproto.settings import Settings
from oracleproto.store import RunDir, new_run_id
from oracleproto.store.naming import RandomBits
from oracleproto.transport.layout import JOURNAL_DIR, LOCK_FILE


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


def _copy_cassettes(source: Path, target: Path) -> None:
    # A crash journal or a lock file belongs to a process of the old run, not to the copy.
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(JOURNAL_DIR, LOCK_FILE))


async def refresh_run(options: RefreshOptions, *, clock: Clock, rand: RandomBits) -> RefreshResult:
    """Re-record ``options.old_run`` into a new run directory and audit the difference."""
    old = RunDir.open(options.old_run)
    manifest = old.load_manifest()
    if manifest.cassettes is None or not old.cassettes_dir.is_dir():
        raise StoreError(
            f"{old.manifest_path}: the run has no cassettes, so there is nothing to refresh against; "
            "record it with `oracleproto run --record` first"
        )
    options.selector.check_against(manifest.models, manifest.filters.question_ids)
    candidates = [p for p in (options.dataset, options.settings.run.source_db) if p is not None]
    source = find_dataset(manifest.hashes.source_db, [*candidates, demo_db_path()])
    run_id = options.run_id or new_run_id(clock, rand)
    if run_id == old.run_id:
        raise StoreError(f"refresh of {old.run_id} needs a new run id; {run_id} is the run being refreshed")
    target = options.runs_root / run_id
    if target.exists():
        raise StoreError(f"{target} already exists; a refresh writes a new run — pick another --run-id")
    target.mkdir(parents=True)
    _copy_cassettes(old.cassettes_dir, target / "cassettes")
    run_options = RunOptions(
        settings=options.settings,
        source_db=source,
        runs_root=options.runs_root,
        mode="refresh",
        run_id=run_id,
        progress=options.progress,
        after=options.after,
        should_refresh=None if options.selector.full else options.selector,
    )
    try:
        summary = await execute_run(run_options, clock=clock, rand=rand)
    except AuthError as exc:
        # A refresh always writes a fresh generation, so it cannot resume: say so instead of
        # the runner's "rerun with --run-id" hint.
        shown = str(exc).removeprefix(f"{ErrorKind.AUTH.value}: ")
        raise AuthError(
            f"{shown}\nthis was a refresh of {old.run_id}: {target} is incomplete and cannot be resumed; "
            "fix the key, remove that directory and run the refresh again",
            status_code=exc.status_code,
        ) from exc
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
