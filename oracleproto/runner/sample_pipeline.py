"""How a session runs its pending samples: the pipeline they go through and the writer that stores them.

The pipeline is the run's record/replay cache, the provider channels over it and the monitor of
their waits; ``run_samples`` runs this process's slots through it while replay workers run theirs,
and every finished sample, whichever process ran it, is stored and accounted by one
``SampleWriter`` (so every DB has one SQLite writer and the log one ``sample_done`` per sample).
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass

from oracleproto.agent.result import SampleResult
from oracleproto.dataset.models import Question
from oracleproto.errors import OracleprotoError, RunStoppedError
from oracleproto.primitives import killpoints
from oracleproto.primitives.clock import Clock
from oracleproto.runner.channels import Channels, open_channels
from oracleproto.runner.done_entries import entries_used_by_done, exact_entries_used_by_done
from oracleproto.runner.failure_tally import retries_of
from oracleproto.runner.identity import RunIdentity
from oracleproto.runner.job_sample import run_job_sample
from oracleproto.runner.jobs import Job
from oracleproto.runner.monitor import RunMonitor
from oracleproto.runner.options import RunOptions, RunSummary
from oracleproto.runner.plan import CellPlan
from oracleproto.runner.progress import RunProgress
from oracleproto.runner.replay_shards import ReplayShard, Retries
from oracleproto.runner.runlog import RunLog
from oracleproto.runner.stopping import first_failure
from oracleproto.settings.model import Settings
from oracleproto.store import ModelStore, RunDir
from oracleproto.transport import RecordReplay
from oracleproto.transport.traffic import SessionTraffic

#: How often the cache rewrites its YAML cassettes during a run. Every entry is durable in the
#: journal the moment it is recorded; compaction rewrites whole files and blocks the event loop,
#: so a long run compacts rarely (and always at the end).
COMPACT_EVERY_S = 600.0
#: Samples in flight per main-LLM slot: a sample spends part of its time in search and the
#: detector, so more samples than LLM slots keep the LLM channel (the bottleneck) busy. With the
#: default caps the detector carries almost as much work as the LLM (each search makes about five
#: detector calls), and too few samples drift into the same phase together, leaving the LLM slots
#: waiting on the detector (the live-efficiency benchmark rows; docs/design/performance.md). A
#: sample in flight costs only its messages.
IN_FLIGHT_PER_LLM_SLOT = 16


@dataclass(frozen=True)
class SampleWriter:
    """Stores and accounts each finished sample, whichever process ran it."""

    options: RunOptions
    stores: dict[str, ModelStore]
    summary: RunSummary
    log: RunLog
    progress: RunProgress

    def __call__(self, job: Job, result: SampleResult, used: list[str], retries: Retries) -> None:
        """Store ``job``'s sample in its model DB, account it and log its ``sample_done``."""
        cell, question_id, sample, prompt = job
        slug = cell.cell.virtual_slug
        # As the earlier implementation's writer: a call-error row brings no prompt, and the stored
        # one (COALESCE) comes from the question's first answered sample
        # (docs/design/record-replay.md, Run store).
        self.stores[slug].write_sample(
            question_id, sample, None if result.error else prompt, result, entry_keys=used
        )
        self.summary.slots_run += 1
        if result.error:
            self.summary.failures.errored(slug, question_id, sample, result.error)
        account_sample(self.options, self.summary, self.progress, cell, result, retries=retries)
        self.log.event(
            "sample_done",
            model=slug,
            question=question_id,
            sample=sample,
            error=result.error,
            parse_ok=result.parse_ok,
        )
        self.progress.advance(slug)


def account_sample(
    options: RunOptions,
    summary: RunSummary,
    progress: RunProgress,
    cell: CellPlan,
    result: SampleResult,
    *,
    retries: dict[str, tuple[str, int]],
) -> None:
    """Count a finished sample's error and failures (shown on its bar); stop at ``--max-cost``."""
    slug = cell.cell.virtual_slug
    if result.error:
        summary.errors[result.error] = summary.errors.get(result.error, 0) + 1
    progress.annotate(slug, summary.failures.sample(slug, result, retries).short())
    if options.spend_cap is not None and options.mode != "replay":
        options.spend_cap.add_sample(cell.cell.real_model, result)
        options.spend_cap.check(summary.run.run_id)


@dataclass(frozen=True)
class SamplePipeline:
    """This process's cache, channels and monitor, and what its samples are run with."""

    cache: RecordReplay
    monitor: RunMonitor
    channels: Channels
    in_flight: asyncio.Semaphore
    questions: dict[str, Question]
    settings: Settings
    clock: Clock
    identity: RunIdentity

    def attach_display(self, progress: RunProgress) -> None:
        """Waits and failure counts go to the progress display."""
        self.monitor.notify = progress.note
        self.monitor.annotate = progress.annotate

    async def run_sample(self, job: Job, store_sample: SampleWriter) -> None:
        """Run one pending slot in this process and hand its sample to ``store_sample``."""
        cell, question_id, sample, _ = job
        async with self.in_flight:
            result = await run_job_sample(
                job,
                question=self.questions[question_id],
                channels=self.channels,
                settings=self.settings,
                clock=self.clock,
                profile=self.identity.profile,
            )
        used = self.cache.take_sample_keys(cell.cell.virtual_slug, question_id, sample)
        store_sample(job, result, used, retries_of(self.cache.store, used))
        # A checkpoint: a stop signal (Ctrl-C, SIGTERM) is acted on between samples even when no
        # call suspends (a replay is served from memory and would otherwise run to the end first).
        await asyncio.sleep(0)

    async def run_shard(
        self, shard: ReplayShard, store_sample: SampleWriter, traffic: SessionTraffic, summary: RunSummary
    ) -> None:
        """Have a worker process run its share; its samples go to ``store_sample`` as they come."""
        shard_traffic, waits = await shard.run(
            store_sample, store_sample.progress.note, self.cache.store.adopt_digests
        )
        traffic.absorb(shard_traffic)
        summary.failures.absorb_waits(waits)

    async def aclose(self) -> None:
        """Release the channels, then the cache (the cache even when releasing the channels failed)."""
        try:
            await self.channels.aclose()
        finally:
            # aclose, not close: in record mode the cache owns the live async transport and its sockets.
            await self.cache.aclose()


def open_pipeline(
    options: RunOptions,
    *,
    identity: RunIdentity,
    settings: Settings,
    run: RunDir,
    clock: Clock,
    stores: dict[str, ModelStore],
    summary: RunSummary,
    log: RunLog,
) -> SamplePipeline:
    """The cache over ``run``'s cassettes, the channels over it and their monitor."""
    live = options.mode != "replay"
    questions = {q.id: q for q in identity.questions}
    refresh_generation = options.refresh.generation if options.refresh and options.mode == "refresh" else None
    cache = RecordReplay(
        run.cassettes_dir,
        clock=clock,
        mode=options.mode,
        cache_dir=options.cache_dir,
        flush_every_s=COMPACT_EVERY_S,
        should_refresh=options.should_refresh,
        write_generation=refresh_generation,
        used_by_done=entries_used_by_done(stores),
        unused_failures_redo=exact_entries_used_by_done(stores),
        inner=options.inner_transport,
        request_sharing=identity.profile.request_sharing,
        live_gate=options.ledger if live else None,
    )
    monitor = RunMonitor(
        log,
        retry_after_max_s=settings.run.retry_after_max_s,
        # Replay reproduces what was recorded; only a live session can find a provider broken.
        breaker_calls=settings.run.circuit_breaker_calls if live else 0,
        tally=summary.failures,
    )
    channels = open_channels(
        settings,
        cache,
        clock,
        live=live,
        monitor=monitor,
        detector_template=identity.detector_template,
        profile=identity.profile,
    )
    in_flight = asyncio.Semaphore(max(1, settings.llm.max_concurrency * IN_FLIGHT_PER_LLM_SLOT))
    return SamplePipeline(cache, monitor, channels, in_flight, questions, settings, clock, identity)


async def run_samples(
    pipeline: SamplePipeline,
    own: list[Job],
    shards: list[ReplayShard],
    *,
    options: RunOptions,
    run: RunDir,
    stores: dict[str, ModelStore],
    summary: RunSummary,
    log: RunLog,
    totals: dict[str, int],
    done: dict[str, int],
) -> BaseException | None:
    """Run ``own`` here and the shards' slots in their workers; returns what stopped them, if anything.

    The pipeline is closed whatever happens, and the session's traffic is in ``summary``.
    """
    failure: BaseException | None = None
    # Workers the caller started stay once their samples are in: it asks follow-ups of them (the
    # plots, runner/replay_plots.py) and stops them. On any failure they end here.
    shard_traffic, keep_shards = SessionTraffic(), False
    try:
        with RunProgress(totals, done, enabled=options.progress) as progress:
            pipeline.attach_display(progress)
            writer = SampleWriter(options, stores, summary, log, progress)
            async with asyncio.TaskGroup() as group:
                for job in own:
                    group.create_task(pipeline.run_sample(job, writer))
                for shard in shards:
                    group.create_task(pipeline.run_shard(shard, writer, shard_traffic, summary))
        keep_shards = options.replay_workers is not None
        killpoints.reached("last-sample")
    except* RunStoppedError as stop_group:
        failure = stop_group.exceptions[0]
    except* (OracleprotoError, OSError, sqlite3.OperationalError) as group_error:
        failure = first_failure(group_error, run.root)
    finally:
        end_shards(shards, keep=keep_shards and failure is None)
        await pipeline.aclose()
        shard_traffic.absorb(pipeline.cache.session_traffic())
        summary.traffic = shard_traffic.stats()
    return failure


def end_shards(shards: list[ReplayShard], *, keep: bool) -> None:
    """Stop the workers (``keep``: their samples are in and their owner stops them)."""
    if keep:
        return
    for shard in shards:
        shard.stop()
