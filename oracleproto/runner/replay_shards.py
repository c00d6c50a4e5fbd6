"""A replay on several cores: pending slots split by question between this process and workers.

A replay is CPU-bound (every answer comes from the cassettes) and one Python process uses one
core. With ``processes`` > 1 the slots of every ``processes``-th question (all its samples, of
every model) go to each worker process, which runs their agent loops over its own read-only
``RecordReplay`` of the same cassettes (and the same ``cache/`` index) and sends each finished
sample back; this process stores every sample, so each DB has one writer and the run directory
is written exactly as a single process writes it (rows are compared sorted: order is free). A
question's samples stay together because they share search and detector requests, which each
process memoises.

Workers start with ``spawn`` (this process runs an event loop and threads: no ``fork``). A worker
ignores Ctrl-C (the terminal sends it to the whole group) and is terminated by this process on
any stop or failure; when this process dies, the worker's next send fails and it exits.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import multiprocessing
import os
import pickle
import signal
import threading
import traceback
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from itertools import count
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from oracleproto import killpoints
from oracleproto.agent.result import SampleResult
from oracleproto.clock import Clock
from oracleproto.dataset.models import Question
from oracleproto.errors import OracleprotoError
from oracleproto.providers.detector_template import DetectorTemplate
from oracleproto.runner.identity import RunIdentity
from oracleproto.runner.jobs import Job
from oracleproto.settings import Settings
from oracleproto.spawning import main_not_rerun
from oracleproto.store import RunDir
from oracleproto.transport.traffic import SessionTraffic

#: Messages read from a worker and not yet handled, at most.
MESSAGES_AHEAD = 64
#: How often a pump waiting on a full queue checks whether the shard was stopped (seconds).
HAND_OVER_POLL_S = 0.25
#: Samples a worker runs at once (as the main process: its slots are CPU, not the provider's).
WORKER_IN_FLIGHT = 40


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity where the OS tells, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def split_by_question(jobs: list[Job], parts: int) -> list[list[Job]]:
    """``parts`` job lists: question *i* (in order of first appearance) goes to list ``i % parts``."""
    order: dict[str, int] = {}
    out: list[list[Job]] = [[] for _ in range(parts)]
    for job in jobs:
        out[order.setdefault(job[1], len(order)) % parts].append(job)
    return out


@dataclass(frozen=True)
class ShardSpec:
    """Everything a worker needs to run its slots (pickled once, at its start)."""

    settings: Settings
    cassette_dir: Path
    cache_dir: Path | None
    log_path: Path
    clock: Clock
    questions: dict[str, Question]
    detector_template: DetectorTemplate | None
    jobs: list[Job]


# -- worker side -----------------------------------------------------------------------------


def worker_main(spec: ShardSpec, conn: Connection) -> None:
    """A worker process: run ``spec.jobs``, send ``("sample", i, result, keys, retries)`` for each,
    then ``("done", traffic, waits)``, or ``("error", exception, traceback text)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        asyncio.run(_serve(spec, conn))
    except (BrokenPipeError, EOFError, ConnectionResetError):
        return  # the main process is gone: nobody wants the rest
    except BaseException as exc:
        _send_error(conn, exc)
    finally:
        conn.close()


def _first_failure(exc: BaseException) -> BaseException:
    """The error one process would have raised: a task group's first package error, else its first."""
    if not isinstance(exc, BaseExceptionGroup):
        return exc
    leaves = [_first_failure(inner) for inner in exc.exceptions]
    return next((e for e in leaves if isinstance(e, OracleprotoError)), leaves[0])


def _send_error(conn: Connection, exc: BaseException) -> None:
    text = "".join(traceback.format_exception(exc))
    exc = _first_failure(exc)
    try:
        pickle.loads(pickle.dumps(exc))  # a class whose constructor takes other arguments fails here
        found: BaseException = exc
    except Exception:
        found = RuntimeError(f"{type(exc).__name__}: {exc}")
    with contextlib.suppress(OSError, EOFError):  # the main process is gone: nobody to tell
        conn.send(("error", found, text))


async def _serve(spec: ShardSpec, conn: Connection) -> None:
    # Imported here: the main process imports this module for its types; the loop is the worker's.
    from oracleproto.runner.channels import open_channels
    from oracleproto.runner.failure_tally import FailureTally, retries_of
    from oracleproto.runner.job_sample import run_job_sample
    from oracleproto.runner.monitor import RunMonitor
    from oracleproto.runner.runlog import RunLog
    from oracleproto.transport import RecordReplay

    settings = spec.settings
    cache = RecordReplay(spec.cassette_dir, clock=spec.clock, mode="replay", cache_dir=spec.cache_dir)
    log = RunLog(spec.log_path, spec.clock)
    tally = FailureTally(fail_action=settings.detector.fail_action)
    monitor = RunMonitor(
        log,
        retry_after_max_s=settings.run.retry_after_max_s,
        breaker_calls=0,
        tally=tally,
        notify=lambda text: conn.send(("note", text)),
    )
    channels = open_channels(
        settings, cache, spec.clock, live=False, monitor=monitor, detector_template=spec.detector_template
    )
    in_flight = asyncio.Semaphore(WORKER_IN_FLIGHT)

    async def one(index: int, job: Job) -> None:
        cell, question_id, sample, _ = job
        async with in_flight:
            question = spec.questions[question_id]
            result = await run_job_sample(
                job, question=question, channels=channels, settings=settings, clock=spec.clock
            )
        used = cache.take_sample_keys(cell.cell.virtual_slug, question_id, sample)
        conn.send(("sample", index, result, used, retries_of(cache.store, used)))
        killpoints.reached("replay-worker")
        await asyncio.sleep(0)

    try:
        async with asyncio.TaskGroup() as group:
            for index, job in enumerate(spec.jobs):
                group.create_task(one(index, job))
    finally:
        await channels.aclose()
        await cache.aclose()
        log.close()
    conn.send(("done", cache.session_traffic(), tally.models))


# -- main-process side ------------------------------------------------------------------------

#: Entry key → (channel, retried attempts) of a sample's entries (``failure_tally.retries_of``).
Retries = dict[str, tuple[str, int]]
#: What a worker's samples are handed to: (job, result, entry keys, retries).
SampleSink = Callable[[Job, SampleResult, list[str], Retries], None]

_worker_ids = count(1)


def start_shards(
    jobs: list[Job],
    *,
    processes: int,
    settings: Settings,
    identity: RunIdentity,
    run: RunDir,
    clock: Clock,
    cache_dir: Path | None,
) -> tuple[list[Job], list[ReplayShard]]:
    """This process's slots, and the worker processes started on the rest (none when ``processes`` ≤ 1).

    Call it after this process's ``RecordReplay`` exists: a first replay builds the index there,
    and the workers open it built.
    """
    if processes <= 1 or len(jobs) < 2:
        return jobs, []
    own, *rest = split_by_question(jobs, processes)
    questions = {q.id: q for q in identity.questions}
    shards: list[ReplayShard] = []
    try:
        for part in filter(None, rest):
            spec = ShardSpec(
                settings=settings,
                cassette_dir=run.cassettes_dir,
                cache_dir=cache_dir,
                log_path=run.log_path,
                clock=clock,
                questions={job[1]: questions[job[1]] for job in part},
                detector_template=identity.detector_template,
                jobs=part,
            )
            shards.append(ReplayShard(spec))
    except BaseException:
        for shard in shards:
            shard.stop()
        raise
    return own, shards


class ReplayShard:
    """One worker process and the messages it sends; ``stop`` ends it whatever state it is in."""

    def __init__(self, spec: ShardSpec) -> None:
        self.jobs = spec.jobs
        self.number = next(_worker_ids)
        self._stopped = False
        context = multiprocessing.get_context("spawn")
        receive, send = context.Pipe(duplex=False)
        self._receive = receive
        self._process = context.Process(
            target=worker_main, args=(spec, send), name=f"oracleproto-replay-{self.number}", daemon=True
        )
        with main_not_rerun():  # the caller's script (guarded or not) is not run again in the worker
            self._process.start()
        send.close()  # the worker holds the only sending end: its exit is our EOF

    async def messages(self) -> AsyncIterator[tuple[Any, ...]]:
        """The worker's messages, in order, until its last (``done`` or ``error``)."""
        loop = asyncio.get_running_loop()
        # Bounded: while this process is behind, the pump stops reading, the pipe fills and the
        # worker waits in its send, so unstored results never pile up here.
        queue: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue(maxsize=MESSAGES_AHEAD)

        def hand_over(message: tuple[Any, ...] | None) -> bool:
            try:
                put = asyncio.run_coroutine_threadsafe(queue.put(message), loop)
                while not self._stopped:
                    with contextlib.suppress(TimeoutError):
                        put.result(timeout=HAND_OVER_POLL_S)
                        return True
                put.cancel()
            except (RuntimeError, concurrent.futures.CancelledError):
                pass  # the loop closed or the run was cancelled
            return False  # nobody reads any more

        def pump() -> None:
            try:
                while True:
                    message = self._receive.recv()
                    if not hand_over(message) or message[0] in ("done", "error"):
                        return
            except Exception:  # EOF, a closed pipe, a message that cannot be read
                hand_over(None)

        threading.Thread(target=pump, name=f"replay-shard-{self.number}", daemon=True).start()
        while (message := await queue.get()) is not None:
            yield message
            if message[0] in ("done", "error"):
                return
        self._process.join(5)
        raise OracleprotoError(
            f"replay worker process {self.number} ended (exit code {self._process.exitcode}) before "
            "finishing its samples — it may have run out of memory; rerun the replay with "
            "--processes 1 to replay in this process alone"
        )

    async def run(self, on_sample: SampleSink, on_note: Callable[[str], None]) -> tuple[SessionTraffic, Any]:
        """Hand every finished sample to ``on_sample``; the worker's traffic and waits at its end."""
        async for message in self.messages():
            kind = message[0]
            if kind == "sample":
                _, index, result, used, retries = message
                on_sample(self.jobs[index], result, used, retries)
            elif kind == "note":
                on_note(message[1])
            elif kind == "done":
                return message[1], message[2]
            else:
                _, exc, text = message
                if not isinstance(exc, OracleprotoError):
                    exc.add_note(f"in replay worker process {self.number}:\n{text}")
                raise exc
        raise AssertionError("unreachable: messages() ends with done, error or a raise")

    def stop(self) -> None:
        """Terminate the worker if it still runs, and reap it."""
        self._stopped = True
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(10)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._receive.close()

    @property
    def alive(self) -> bool:
        """True while the worker process runs."""
        return self._process.is_alive()
