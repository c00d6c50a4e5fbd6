"""Execute a run: admission first, then every pending (cell, question, sample) slot.

Record mode calls the providers live through the cache and stores what comes back; replay mode
re-executes the same pipeline from the cassettes with no socket. Resume is the paper's rule:
rerunning a run id redoes exactly the slots that are not done.
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from datetime import datetime

from oracleproto.errors import DiskFullError, RunStoppedError, StoreError
from oracleproto.primitives import killpoints
from oracleproto.primitives.clock import Clock
from oracleproto.profile import builtin_profile, profile_fingerprint
from oracleproto.runner.failure_tally import FailureTally
from oracleproto.runner.identity import RunIdentity, resolve_identity
from oracleproto.runner.jobs import Job, prepare_stores
from oracleproto.runner.manifest_build import build_manifest
from oracleproto.runner.nothing_pending import nothing_pending
from oracleproto.runner.options import Recorded, RunOptions, RunSummary
from oracleproto.runner.plan import RunPlan, plan_for_settings
from oracleproto.runner.profile_checks import check_profile_settings
from oracleproto.runner.replay_shards import start_shards
from oracleproto.runner.resume_guard import check_resume
from oracleproto.runner.run_texts import RunTexts, load_run_texts, recorded_run_texts, with_protocol_switches
from oracleproto.runner.runlog import RunLog
from oracleproto.runner.sample_pipeline import open_pipeline, run_samples
from oracleproto.runner.stopping import (
    STOP_MESSAGES,
    close_all,
    disk_full_abort,
    disk_full_of,
    signal_reason,
)
from oracleproto.runner.stops import resumable_stop, stop_reason
from oracleproto.settings.model import CacheMode, Settings
from oracleproto.store import (
    CassettesInfo,
    Manifest,
    ModelStore,
    RunDir,
    format_timestamp,
    new_run_id,
    parse_timestamp,
)
from oracleproto.store.naming import RandomBits
from oracleproto.store.sample_entries import entry_digests, read_sample_keys, sample_entries_root
from oracleproto.transport import CassetteStore
from oracleproto.transport.stats import cassette_stats
from oracleproto.transport.store import open_entries

#: The options and summary types live in ``runner/options.py``; importing them from here still works.
__all__ = ["CASSETTES_DIR_NAME", "Recorded", "RunOptions", "RunSummary", "execute_run"]

CASSETTES_DIR_NAME = "cassettes"


def _session_manifest(
    options: RunOptions,
    *,
    run: RunDir,
    identity: RunIdentity,
    plan: RunPlan,
    existing: Manifest | None,
    cassettes_mode: CacheMode,
    clock: Clock,
) -> tuple[Manifest, datetime]:
    """The manifest this session writes (checked against an existing one), and the run's start time."""
    recorded = options.recorded
    if recorded is not None:
        started_at = recorded.started_at
    elif existing is not None:
        started_at = parse_timestamp(existing.started_at)
    else:
        started_at = clock.now()
    manifest = build_manifest(
        run.run_id,
        identity,
        plan,
        options.settings,
        started_at=started_at,
        finished_at=None,
        cassettes=CassettesInfo(dir=CASSETTES_DIR_NAME, root_digest=None, mode=cassettes_mode),
    )
    refresh = options.refresh if recorded is None else recorded.refresh
    if refresh is not None:
        manifest = manifest.model_copy(update={"refresh": refresh})
    experiment = options.experiment if recorded is None else recorded.experiment
    if experiment is not None:
        manifest = manifest.model_copy(update={"experiment": experiment})
    if existing is not None:
        check_resume(run, existing, manifest, identity.config_snapshot)
    return manifest, started_at


async def execute_run(options: RunOptions, *, clock: Clock, rand: RandomBits) -> RunSummary:
    """Run (or resume, or replay) one run; returns what it did.

    Raises a ``RunStoppedError`` (``AuthError`` on 401/403, ``QuotaError`` on exhausted credit,
    ``ProviderUnavailableError``) when the run stopped resumably.
    """
    try:
        return await _execute(options, clock=clock, rand=rand)
    finally:
        if options.ledger is not None:
            await options.ledger.aclose()


async def _execute(options: RunOptions, *, clock: Clock, rand: RandomBits) -> RunSummary:
    if options.run_id is not None:
        # Named first: a run another process is recording now is why this command cannot go on,
        # whatever this session's settings lack ("no models to run" used to hide it).
        RunDir.at(options.runs_root, options.run_id).refuse_if_being_written()
    settings = options.settings
    live = options.mode != "replay"
    if live:
        settings.validate_for_live()
    else:
        settings.validate_static()
    recorded = options.recorded
    # The protocol texts come from PROTOCOLS_FILE (or the recording); with a file, the ENABLE_*
    # switches follow its blocks, so the snapshot, the agent's belief parsing and analysis agree.
    texts = recorded_run_texts(recorded.config_snapshot) if recorded else load_run_texts(settings)
    if recorded is None and options.run_id is not None:
        texts = _resumed_texts(texts, RunDir.at(options.runs_root, options.run_id).existing_manifest())
    settings = with_protocol_switches(settings, texts, recorded=recorded is not None)
    options = replace(options, settings=settings)
    identity = resolve_identity(
        settings,
        options.source_db,
        snapshot_override=recorded.config_snapshot if recorded else None,
        texts=texts,
    )
    if options.config_file is not None and recorded is None:
        snapshot = {**identity.config_snapshot, "config_file": options.config_file}
        identity = replace(identity, config_snapshot=snapshot)
    plan = plan_for_settings(identity.questions, settings, identity.training_cutoffs)
    run_id = options.run_id or new_run_id(clock, rand)
    # Everything that can refuse the run is checked before the first byte is written: a refused
    # resume (changed settings), a foreign directory or a run held by another process stay untouched.
    target = RunDir.at(options.runs_root, run_id)
    target.refuse_if_being_written()
    existing = target.existing_manifest()
    prior = existing.hashes.prompt_templates if existing is not None else None
    identity = identity.keeping_templates_of(recorded.prompt_templates_hash if recorded else prior)
    _session_manifest(
        options,
        run=target,
        identity=identity,
        plan=plan,
        existing=existing,
        cassettes_mode=_cassettes_mode(options),
        clock=clock,
    )
    # After the resume check (a changed setting is named as such), before any byte is written.
    check_profile_settings(texts.profile, settings)
    reports = options.after is not None
    if options.mode == "record" and nothing_pending(target, existing, plan, analysis=reports):
        # A finished run re-entered with nothing left to do: not a byte is written (its seal holds).
        return RunSummary(target, plan.total_slots(), plan.total_slots(), 0, unchanged=True)
    run = RunDir.create(options.runs_root, run_id)
    with run.writer_lock():
        return await _execute_locked(options, run, identity, plan, clock)


def _resumed_texts(texts: RunTexts, existing: Manifest | None) -> RunTexts:
    """A resumed run recorded before harness profiles keeps naming none (its manifest and snapshots
    must stay as they were); it used the built-in profile, so only that one may resume it."""
    if existing is None or existing.earlier_implementation or existing.harness_profile is not None:
        return texts
    # The shorthand files are compared as they always were (runtime_protocols, the detector hash).
    if texts.base is not None and profile_fingerprint(texts.base) != profile_fingerprint(builtin_profile()):
        raise StoreError(
            f"run {existing.run_id} was recorded before harness profiles, with oracleproto's built-in "
            f"harness; this session's profile is {texts.base.name} ({profile_fingerprint(texts.base)}), "
            "which sends other bytes. Nothing was written. Resume it without HARNESS_PROFILE / --profile "
            "(and with the files it was started with), or start a new run"
        )
    return texts.without_profile_record()


def _cassettes_mode(options: RunOptions) -> CacheMode:
    return options.recorded.cassettes_mode if options.recorded else options.mode


async def _execute_locked(
    options: RunOptions, run: RunDir, identity: RunIdentity, plan: RunPlan, clock: Clock
) -> RunSummary:
    """The run itself, under the run directory's writer lock."""
    manifest, started_at, log = _start_session(options, run, identity, plan, clock)
    summary = RunSummary(run, plan.total_slots(), 0, 0)
    summary.samples_admitted = sum(len(cell.admitted) for cell in plan.cells) * plan.sampling_n
    summary.failures = FailureTally(fail_action=options.settings.detector.fail_action)
    recorded_entries, finished_at = await _run_logging_aborts(
        options, run, identity, plan, clock, started_at=started_at, log=log, summary=summary
    )
    _seal_manifest(options, run, manifest, recorded_entries, summary, finished_at=finished_at)
    recorded_entries = None  # every entry can go before the analysis pass: memory stays one run's worth
    if options.after is not None:
        options.after(run, options.settings)
    log.event(
        "run_finished",
        slots_run=summary.slots_run,
        errors=summary.errors,
        # Which samples a resume redoes: [model, question, sample, error] each.
        errored_samples=[list(slot) for slot in sorted(summary.failures.errored_samples)],
    )
    log.close()
    return summary


def _start_session(
    options: RunOptions, run: RunDir, identity: RunIdentity, plan: RunPlan, clock: Clock
) -> tuple[Manifest, datetime, RunLog]:
    """Write this session's manifest and open the run log on its ``run_started`` event."""
    # Checked again under the lock: another process may have started this run id meanwhile.
    existing = run.existing_manifest()
    manifest, started_at = _session_manifest(
        options,
        run=run,
        identity=identity,
        plan=plan,
        existing=existing,
        cassettes_mode=_cassettes_mode(options),
        clock=clock,
    )
    run.write_manifest(manifest)
    killpoints.reached("manifest")

    log = RunLog(run.log_path, clock)
    log.event(
        "run_started",
        run_id=run.run_id,
        mode=options.mode,
        models=list(plan.virtual_slugs),
        questions=len(identity.questions),
        sampling_n=plan.sampling_n,
        resumed=existing is not None,
    )
    return manifest, started_at, log


async def _run_logging_aborts(
    options: RunOptions,
    run: RunDir,
    identity: RunIdentity,
    plan: RunPlan,
    clock: Clock,
    *,
    started_at: datetime,
    log: RunLog,
    summary: RunSummary,
) -> tuple[CassetteStore | None, datetime]:
    """``_run_pending``, a stop or a full disk logged as the run's abort; the model DBs closed after."""
    stores: dict[str, ModelStore] = {}
    try:
        return await _run_pending(
            options,
            run,
            identity,
            plan,
            clock,
            started_at=started_at,
            log=log,
            summary=summary,
            stores=stores,
        )
    except (asyncio.CancelledError, KeyboardInterrupt) as stop:
        # Ctrl-C or SIGTERM: every finished sample is committed and the journal holds every entry.
        reason = signal_reason(stop)
        log.event("run_aborted", reason=reason, message=STOP_MESSAGES[reason])
        log.close()
        raise
    except DiskFullError as full:
        raise disk_full_abort(full, run.run_id, log) from full
    except (OSError, sqlite3.OperationalError) as exc:
        disk = disk_full_of(exc, run.root)
        if disk is None:
            raise
        raise disk_full_abort(disk, run.run_id, log) from exc
    finally:
        close_all(stores.values())


async def _run_pending(
    options: RunOptions,
    run: RunDir,
    identity: RunIdentity,
    plan: RunPlan,
    clock: Clock,
    *,
    started_at: datetime,
    log: RunLog,
    summary: RunSummary,
    stores: dict[str, ModelStore],
) -> tuple[CassetteStore | None, datetime]:
    """Open the model DBs into ``stores``, run the pending slots and finish every DB.

    Returns the run's recorded entries and its end time.
    """
    settings = options.settings
    recorded = options.recorded
    jobs, totals, done = prepare_stores(
        plan=plan,
        identity=identity,
        settings=settings,
        run=run,
        run_id=run.run_id,
        started_at=started_at,
        stores=stores,
    )
    summary.slots_done_before = sum(done.values())
    recorded_entries = await _run_jobs(
        jobs=jobs,
        options=options,
        identity=identity,
        settings=settings,
        run=run,
        clock=clock,
        stores=stores,
        summary=summary,
        log=log,
        totals=totals,
        done=done,
    )
    if recorded_entries is None:
        # Nothing ran in this session: a finished run re-entered, or one killed after its last
        # sample and before its journal was folded. Fold any leftover journal (not in replay,
        # which never writes cassettes), then read the entries from disk.
        recorded_entries = _entries_on_disk(run, writable=options.mode != "replay")
    finished_at = recorded.finished_at if recorded and recorded.finished_at else clock.now()
    for store in stores.values():
        store.finish(finished_at)
    killpoints.reached("finished")
    return recorded_entries, finished_at


def _seal_manifest(
    options: RunOptions,
    run: RunDir,
    manifest: Manifest,
    entries: CassetteStore | None,
    summary: RunSummary,
    *,
    finished_at: datetime,
) -> None:
    """Write the finished run's manifest: its end time and the cassettes' and samples' root digests."""
    cache_root, samples_root = _attest(options, run, manifest, entries, summary)
    cassettes_mode = _cassettes_mode(options)
    manifest = manifest.model_copy(
        update={
            "finished_at": format_timestamp(finished_at),
            "cassettes": CassettesInfo(dir=CASSETTES_DIR_NAME, root_digest=cache_root, mode=cassettes_mode),
            "sample_entries_root": samples_root,
        }
    )
    run.write_manifest(manifest)


def _attest(
    options: RunOptions,
    run: RunDir,
    manifest: Manifest,
    entries: CassetteStore | None,
    summary: RunSummary,
) -> tuple[str | None, str | None]:
    """The cassettes' root digest and the per-sample attestation root (and a replay's statistics)."""
    if entries is None:
        return None, None
    if options.mode == "replay":
        # What the replay saved, from the entries in memory (parsing the YAML again doubled a replay).
        summary.cassettes = cassette_stats(run.cassettes_dir, store=entries)
    sample_keys = read_sample_keys(run.model_db_paths(manifest))
    samples_root = (
        sample_entries_root(sample_keys, entry_digests(entries.get, entries.digest))
        if sample_keys is not None
        else None
    )
    return entries.root_digest(), samples_root


def _entries_on_disk(run: RunDir, *, writable: bool) -> CassetteStore | None:
    """The run's recorded entries, any leftover crash journal folded in first when ``writable``."""
    if not any(run.cassettes_dir.iterdir()):
        return None
    if writable:
        return open_entries(run.cassettes_dir)
    return CassetteStore(run.cassettes_dir, writable=False)


async def _run_jobs(
    *,
    jobs: list[Job],
    options: RunOptions,
    identity: RunIdentity,
    settings: Settings,
    run: RunDir,
    clock: Clock,
    stores: dict[str, ModelStore],
    summary: RunSummary,
    log: RunLog,
    totals: dict[str, int],
    done: dict[str, int],
) -> CassetteStore | None:
    """Run the pending slots concurrently; the first RunStoppedError (auth, quota, …) cancels the rest.

    Returns the cache's entries, for the root digests (in memory: re-reading the YAML files would
    cost seconds on a large run), or None when there was nothing to run.
    """
    if not jobs:
        return None
    live = options.mode != "replay"
    pipeline = open_pipeline(
        options,
        identity=identity,
        settings=settings,
        run=run,
        clock=clock,
        stores=stores,
        summary=summary,
        log=log,
    )
    own, shards = start_shards(
        jobs,
        workers=options.replay_workers if not live else [],
        processes=options.replay_processes,
        settings=settings,
        identity=identity,
        run=run,
        clock=clock,
        cache_dir=options.cache_dir,
    )
    failure = await run_samples(
        pipeline,
        own,
        shards,
        options=options,
        run=run,
        stores=stores,
        summary=summary,
        log=log,
        totals=totals,
        done=done,
    )
    _raise_failure(failure, run, log)
    return pipeline.cache.store


def _raise_failure(failure: BaseException | None, run: RunDir, log: RunLog) -> None:
    """Log what stopped the session as the run's abort and raise it (a stop as a resumable one)."""
    if isinstance(failure, RunStoppedError):
        log.event("run_aborted", reason=stop_reason(failure), channel=failure.channel, message=str(failure))
        raise resumable_stop(failure, run.run_id) from failure
    if failure is not None:
        log.event("run_aborted", reason=type(failure).__name__, message=str(failure))
        raise failure
