"""A replay on several cores: pending slots split by question between this process and workers.

A replay is CPU-bound (every answer comes from the cassettes) and one Python process uses one
core. With ``processes`` > 1 the slots of every ``processes``-th question (all its samples, of
every model) go to each worker process, which runs their agent loops over its own read-only
``RecordReplay`` of the same cassettes (and the same ``cache/`` index) and sends each finished
sample back; this process stores every sample, so each DB has one writer and the run directory
is written exactly as a single process writes it (rows are compared sorted: order is free). A
question's samples stay together because they share search and detector requests, which each
process memoises.

A worker done with its slots stays for follow-ups this process asks of it, in order
(``ReplayShard.call``): a replay has it draw the analysis's plots (``runner/replay_plots.py``)
while this process writes the tables and compares the databases.

Workers start with ``spawn`` (this process runs an event loop and threads: no ``fork``). A worker
ignores Ctrl-C (the terminal sends it to the whole group) and is terminated by this process on
any stop or failure; when this process dies, the worker's next send (or, waiting for a follow-up,
its next receive) fails and it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
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

from oracleproto.agent.result import SampleResult
from oracleproto.analysis.heap import release_heap
from oracleproto.dataset.models import Question
from oracleproto.errors import OracleprotoError
from oracleproto.primitives import killpoints
from oracleproto.primitives.clock import Clock
from oracleproto.primitives.spawning import main_not_rerun
from oracleproto.profile import HarnessProfile
from oracleproto.providers.detector_template import DetectorTemplate
from oracleproto.runner.identity import RunIdentity
from oracleproto.runner.jobs import Job
from oracleproto.settings.model import Settings
from oracleproto.store import RunDir
from oracleproto.transport.traffic import SessionTraffic

#: This process's share of the questions against a worker's 1: it also stores and accounts every
#: worker's samples. At 6×80×3 an even split left this process working alone for the last 1.5 s of
#: the sample phase (per-process CPU sampling); first replays took 12.0 s at 1.0, 11.5–13.3 s at
#: 0.85 and 11.1–11.2 s at 0.72 (quiet machine, one core each).
MAIN_WEIGHT = 0.72
#: Messages read from a worker and not yet handled, at most.
MESSAGES_AHEAD = 64
#: How often a pump waiting for room checks whether the shard was stopped (seconds).
HAND_OVER_POLL_S = 0.25
#: Samples a worker runs at once (as the main process: its slots are CPU, not the provider's).
WORKER_IN_FLIGHT = 40


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity where the OS tells, else the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def split_by_question(jobs: list[Job], parts: int, *, first_weight: float = 1.0) -> list[list[Job]]:
    """``parts`` job lists, each question's jobs (in order of first appearance) all in one list.

    Questions are dealt by smooth weighted round robin: list 0 (this process's) gets
    ``first_weight`` against 1 for every other list, spread evenly through the run; with equal
    weights question *i* goes to list ``i % parts``.
    """
    weights = [first_weight] + [1.0] * (parts - 1)
    total = sum(weights)
    current = [0.0] * parts
    placed: dict[str, int] = {}
    out: list[list[Job]] = [[] for _ in range(parts)]
    for job in jobs:
        part = placed.get(job[1])
        if part is None:
            current = [c + w for c, w in zip(current, weights, strict=True)]
            part = max(range(parts), key=lambda i: (current[i], -i))
            current[part] -= total
            placed[job[1]] = part
        out[part].append(job)
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
    profile: HarnessProfile
    jobs: list[Job]


# -- worker side -----------------------------------------------------------------------------


def worker_main(conn: Connection) -> None:
    """A worker process: warm up, take its ``ShardSpec``, run its jobs; send
    ``("sample", i, result, keys, retries, digests)`` for each, then ``("done", traffic, waits)``,
    or ``("error", exception, traceback text)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        # Imported while the main process still prepares the run (it starts workers first).
        from oracleproto.runner import channels, job_sample  # noqa: F401
        from oracleproto.transport import recorder  # noqa: F401

        asyncio.run(_serve(conn.recv(), conn))
        _follow_ups(conn)
    except (BrokenPipeError, EOFError, ConnectionResetError):
        return  # the main process is gone: nobody wants the rest
    except BaseException as exc:
        _send_error(conn, exc)
    finally:
        conn.close()


def _warm_plots() -> None:
    """Import the plotting stack (matplotlib) before the plots are asked for."""
    import oracleproto.analysis.plots  # noqa: F401


def _draw_plots(result: Any, folder: Path) -> None:
    """Write the analysis's plots into ``folder`` (the analysis's temporary folder)."""
    from oracleproto.analysis.plots import write_plots

    write_plots(result, folder)


#: What a worker done with its slots does when asked: name → function of the call's arguments.
FOLLOW_UPS: dict[str, Callable[..., None]] = {"warm_plots": _warm_plots, "draw_plots": _draw_plots}


def _follow_ups(conn: Connection) -> None:
    """Serve follow-ups until this process closes the pipe: ``("result",)`` or ``("failed", why)`` each."""
    # The shard's entries, memos and loop are garbage now; the plots are drawn while the main process
    # holds its analysis, so the two peak together: return the freed heap first (≈ 40 MiB at 6×80×3).
    gc.collect()
    release_heap()
    while True:
        name, args = conn.recv()
        try:
            FOLLOW_UPS[name](*args)
        except Exception as exc:
            conn.send(("failed", f"{type(exc).__name__}: {exc}"))
        else:
            conn.send(("result",))


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
    cache = RecordReplay(
        spec.cassette_dir,
        clock=spec.clock,
        mode="replay",
        cache_dir=spec.cache_dir,
        request_sharing=spec.profile.request_sharing,
    )
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
        settings,
        cache,
        spec.clock,
        live=False,
        monitor=monitor,
        detector_template=spec.detector_template,
        profile=spec.profile,
    )
    in_flight = asyncio.Semaphore(WORKER_IN_FLIGHT)

    async def one(index: int, job: Job) -> None:
        cell, question_id, sample, _ = job
        async with in_flight:
            question = spec.questions[question_id]
            result = await run_job_sample(
                job,
                question=question,
                channels=channels,
                settings=settings,
                clock=spec.clock,
                profile=spec.profile,
            )
        used = cache.take_sample_keys(cell.cell.virtual_slug, question_id, sample)
        # The digests this worker verified as it read the entries: the main process attests every
        # sample's entries, and would otherwise fetch and hash them again.
        digests = {key: digest for key in used if (digest := cache.store.digest(key)) is not None}
        conn.send(("sample", index, result, used, retries_of(cache.store, used), digests))
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


def start_workers(processes: int) -> list[ReplayShard]:
    """``processes - 1`` worker processes, started now so they import while the run is prepared."""
    workers: list[ReplayShard] = []
    try:
        for _ in range(processes - 1):
            workers.append(ReplayShard())
    except BaseException:
        for worker in workers:
            worker.stop()
        raise
    return workers


def start_shards(
    jobs: list[Job],
    *,
    workers: list[ReplayShard] | None,
    processes: int,
    settings: Settings,
    identity: RunIdentity,
    run: RunDir,
    clock: Clock,
    cache_dir: Path | None,
) -> tuple[list[Job], list[ReplayShard]]:
    """This process's slots, and the ``workers`` given the rest (those not needed are released);
    without ``workers``, ``processes - 1`` are started now.

    Call it after this process's ``RecordReplay`` exists: a first replay builds the index there,
    and the workers open it built.
    """
    if workers is None:
        workers = start_workers(processes) if len(jobs) >= 2 else []
    if not workers or len(jobs) < 2:
        for worker in workers:
            worker.release()
        return jobs, []
    own, *rest = split_by_question(jobs, len(workers) + 1, first_weight=MAIN_WEIGHT)
    questions = {q.id: q for q in identity.questions}
    busy: list[ReplayShard] = []
    for worker, part in zip(workers, rest, strict=True):
        if not part:
            worker.release()
            continue
        spec = ShardSpec(
            settings=settings,
            cassette_dir=run.cassettes_dir,
            cache_dir=cache_dir,
            log_path=run.log_path,
            clock=clock,
            questions={job[1]: questions[job[1]] for job in part},
            detector_template=identity.detector_template,
            profile=identity.profile,
            jobs=part,
        )
        worker.assign(spec)
        busy.append(worker)
    return own, busy


class FollowUpError(OracleprotoError):
    """A worker's follow-up did not run: it failed there, or the worker is gone (do it here)."""


class ReplayShard:
    """One worker process and the messages it sends; ``stop`` ends it whatever state it is in."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []
        self.number = next(_worker_ids)
        self._stopped = False
        #: Follow-ups asked before the worker had its slots (sent right after them).
        self._queued: list[tuple[str, tuple[Any, ...]]] = []
        self._assigned = False
        self._shard_over = False
        self._asked = 0
        self._read = 0
        #: Follow-up replies read and not yet taken, by the number of the call they answer.
        self._replies: dict[int, tuple[Any, ...]] = {}
        context = multiprocessing.get_context("spawn")
        mine, theirs = context.Pipe(duplex=True)
        self._conn = mine
        self._process = context.Process(
            target=worker_main, args=(theirs,), name=f"oracleproto-replay-{self.number}", daemon=True
        )
        with main_not_rerun():  # the caller's script (guarded or not) is not run again in the worker
            self._process.start()
        theirs.close()  # the worker holds the only other end: its exit is our EOF

    def assign(self, spec: ShardSpec) -> None:
        """Give the worker its slots (it starts on them at once)."""
        self.jobs = spec.jobs
        self._conn.send(spec)
        self._assigned = True
        for follow_up in self._queued:
            self._conn.send(follow_up)
        self._queued.clear()

    def call(self, name: str, *args: Any) -> Callable[[], None]:
        """Ask for a follow-up (``FOLLOW_UPS``) for when the worker is done with its slots; returns
        a function that waits for it and raises :class:`FollowUpError` if it did not run.

        Wait only once the worker's samples are all in (``run`` returned): until then its pipe is
        read by ``messages``.
        """
        number = self._asked
        self._asked += 1
        try:
            if self._stopped:
                raise OSError("stopped")
            if self._assigned:
                self._conn.send((name, args))
            else:
                self._queued.append((name, args))
        except (OSError, ValueError) as exc:  # a stopped worker's closed pipe
            why = f"the worker is gone ({exc})"
            return lambda: self._failed(name, why)
        return lambda: self._reply(number, name)

    def _failed(self, name: str, why: str) -> None:
        raise FollowUpError(f"replay worker process {self.number}: {name}: {why}")

    def _reply(self, number: int, name: str) -> None:
        if self._stopped:
            self._failed(name, "the worker was stopped")
        if not self._shard_over:
            self._failed(name, "its samples are not all in yet")
        try:
            while number not in self._replies:
                self._replies[self._read] = self._conn.recv()
                self._read += 1
        except (OSError, EOFError, ValueError) as exc:
            self._failed(name, f"the worker is gone ({type(exc).__name__})")
        reply = self._replies.pop(number)
        if reply[0] != "result":
            self._failed(name, str(reply[1]))

    def release(self) -> None:
        """End a worker that has nothing to do."""
        self.stop()

    async def messages(self) -> AsyncIterator[tuple[Any, ...]]:
        """The worker's messages, in order, until its last (``done`` or ``error``)."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue()
        # At most MESSAGES_AHEAD read and not yet handled: beyond that the pump stops reading, the
        # pipe fills and the worker waits in its send, so unstored results never pile up here. The
        # pump never waits for the event loop itself: a replay's loop turns only between whole
        # samples of dozens of tasks, and one message per turn throttled the worker to a crawl.
        permits = threading.Semaphore(MESSAGES_AHEAD)

        def hand_over(message: tuple[Any, ...] | None) -> bool:
            while not permits.acquire(timeout=HAND_OVER_POLL_S):
                if self._stopped:
                    return False
            try:
                loop.call_soon_threadsafe(queue.put_nowait, message)
            except RuntimeError:
                return False  # the loop closed: nobody reads any more
            return True

        def pump() -> None:
            try:
                while True:
                    message = self._conn.recv()
                    if not hand_over(message) or message[0] in ("done", "error"):
                        return
            except Exception:  # EOF, a closed pipe, a message that cannot be read
                hand_over(None)

        threading.Thread(target=pump, name=f"replay-shard-{self.number}", daemon=True).start()
        while (message := await queue.get()) is not None:
            permits.release()
            if message[0] == "done":
                self._shard_over = True
            yield message
            if message[0] in ("done", "error"):
                return
        self._process.join(5)
        raise OracleprotoError(
            f"replay worker process {self.number} ended (exit code {self._process.exitcode}) before "
            "finishing its samples — it may have run out of memory; rerun the replay with "
            "--processes 1 to replay in this process alone"
        )

    async def run(
        self,
        on_sample: SampleSink,
        on_note: Callable[[str], None],
        on_digests: Callable[[dict[str, str]], None],
    ) -> tuple[SessionTraffic, Any]:
        """Hand every finished sample to ``on_sample`` (and the digests of its entries to
        ``on_digests``); the worker's traffic and waits at its end."""
        async for message in self.messages():
            kind = message[0]
            if kind == "sample":
                _, index, result, used, retries, digests = message
                on_digests(digests)
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
        self._conn.close()

    @property
    def alive(self) -> bool:
        """True while the worker process runs."""
        return self._process.is_alive()
