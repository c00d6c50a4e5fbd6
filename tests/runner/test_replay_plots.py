"""A replay's worker draws the plots once its samples are in; whatever goes wrong there, they are
drawn here, the replay still matches byte for byte, and nothing is left behind."""

from __future__ import annotations

import asyncio
import errno
import multiprocessing
import os
import random
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oracleproto.analysis import writer
from oracleproto.cli.run import write_run_analysis
from oracleproto.primitives import killpoints
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner import replay_plots
from oracleproto.runner.replay import compare_runs, db_digests, replay_run
from oracleproto.runner.replay_shards import FollowUpError, ReplayShard
from oracleproto.store import RunDir
from tests.runner.conftest import replay_offline

PLOT_FILES = {
    f"{stem}.{ext}" for stem in ("buckets", "cost_vs_composite", "pass_at_1") for ext in ("png", "svg")
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, record_sim: Any) -> Path:
    """A 2-model run with its analysis (tables and plots)."""
    summary = record_sim(tmp_path_factory.mktemp("rec"), models=2, samples=2, analysis=True)
    return Path(summary.run.root)


def _plot_checks(report: Any) -> dict[str, bool]:
    return {Path(c.what).name: c.ok for c in report.checks if Path(c.what).name in PLOT_FILES}


def _no_drawing_here(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make this process's drawing fail loudly (so only the worker can have drawn); returns the log."""
    drawn_here: list[str] = []

    def refused(result: Any, folder: Path) -> writer.PendingPlots:
        drawn_here.append(str(folder))
        raise AssertionError("the plots were drawn in the main process")

    monkeypatch.setattr(replay_plots, "draw_here", refused)
    return drawn_here


def test_the_worker_draws_the_plots_and_the_replay_matches_byte_for_byte(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn_here = _no_drawing_here(monkeypatch)
    report = replay_offline(recorded, tmp_path / "out", processes=2, analysis=True)
    assert report.ok, [c for c in report.checks if not c.ok]
    assert _plot_checks(report) == dict.fromkeys(PLOT_FILES, True)  # every plot compared, every one equal
    assert drawn_here == []
    assert multiprocessing.active_children() == []


def test_one_process_draws_its_own_plots_alike(recorded: Path, tmp_path: Path) -> None:
    report = replay_offline(recorded, tmp_path / "out", processes=1, analysis=True)
    assert report.ok and _plot_checks(report) == dict.fromkeys(PLOT_FILES, True)


def _on_call(monkeypatch: pytest.MonkeyPatch, name: str, action: Callable[[ReplayShard], None]) -> None:
    """Run ``action`` on the worker right after the follow-up ``name`` is asked of it."""
    real_call = ReplayShard.call

    def spy(self: ReplayShard, asked: str, *args: Any) -> Callable[[], None]:
        reply = real_call(self, asked, *args)
        if asked == name:
            action(self)
        return reply

    monkeypatch.setattr(ReplayShard, "call", spy)


def test_a_worker_killed_while_drawing_leaves_the_plots_to_this_process(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    killed: list[int] = []

    def kill(worker: ReplayShard) -> None:
        pid = worker._process.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    _on_call(monkeypatch, "draw_plots", kill)
    report = replay_offline(recorded, tmp_path / "out", processes=2, analysis=True)
    assert killed
    assert report.ok, [c for c in report.checks if not c.ok]
    assert _plot_checks(report) == dict.fromkeys(PLOT_FILES, True)
    assert multiprocessing.active_children() == []


def test_a_drawing_that_fails_on_the_worker_is_done_here(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The worker is asked to draw into a folder that does not exist: its savefig fails there.
    real_init = replay_plots._OnWorker.__init__
    failed: list[str] = []

    def elsewhere(self: Any, drawer: Any, reply: Any, result: Any, folder: Path) -> None:
        bad = drawer.worker.call("draw_plots", result, folder / "missing" / "folder")
        real_init(self, drawer, bad, result, folder)

    real_reply = ReplayShard._reply

    def spy_reply(self: ReplayShard, number: int, name: str) -> None:
        try:
            real_reply(self, number, name)
        except FollowUpError as exc:
            failed.append(str(exc))
            raise

    monkeypatch.setattr(replay_plots._OnWorker, "__init__", elsewhere)
    monkeypatch.setattr(ReplayShard, "_reply", spy_reply)
    report = replay_offline(recorded, tmp_path / "out", processes=2, analysis=True)
    assert report.ok and _plot_checks(report) == dict.fromkeys(PLOT_FILES, True)
    assert len(failed) == 1 and "draw_plots: FileNotFoundError" in failed[0], failed
    assert multiprocessing.active_children() == []


def test_an_analysis_that_fails_while_the_worker_draws_ends_it_and_leaves_nothing(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The tables are written while the worker draws: a full disk there fails the pass mid-drawing.
    out = tmp_path / "out"
    stopped: list[bool] = []
    real_cancel = replay_plots._OnWorker.cancel

    def spy_cancel(self: Any) -> None:
        real_cancel(self)
        stopped.append(not self._drawer.worker.alive)

    def disk_full(result: Any) -> str:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(replay_plots._OnWorker, "cancel", spy_cancel)
    monkeypatch.setattr(writer, "summary_json", disk_full)
    with pytest.raises(OSError, match="No space left"):
        replay_offline(recorded, out, processes=2, analysis=True)
    assert stopped == [True]  # the worker ended before the temporary folder was removed
    assert not out.exists()
    assert multiprocessing.active_children() == []


def test_an_analysis_that_fails_after_the_plots_leaves_nothing(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(killpoints.ENV_VAR, "analysis@ENOSPC")  # every file written, not yet swapped in
    killpoints._configured.cache_clear()
    out = tmp_path / "out"
    try:
        with pytest.raises(OSError, match="No space left"):
            replay_offline(recorded, out, processes=2, analysis=True)
    finally:
        killpoints._configured.cache_clear()
    assert not out.exists()
    assert multiprocessing.active_children() == []


def test_a_follow_up_waited_for_before_the_samples_are_in_is_refused() -> None:
    worker = ReplayShard()
    try:
        reply = worker.call("warm_plots")
        with pytest.raises(FollowUpError, match="its samples are not all in yet"):
            reply()
    finally:
        worker.stop()
    with pytest.raises(FollowUpError, match="the worker was stopped"):
        reply()  # asked before it stopped (a worker released unused): done here instead
    with pytest.raises(FollowUpError, match="the worker is gone"):
        worker.call("warm_plots")()  # asked of a stopped worker


def test_an_unknown_follow_up_fails_on_the_worker_with_its_name(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    failures: list[str] = []
    real_init = replay_plots.WorkerPlots.__init__

    def asking_more(self: Any, worker: ReplayShard, meanwhile: Callable[[], None]) -> None:
        real_init(self, worker, meanwhile)
        unknown = worker.call("no_such_follow_up")
        real_meanwhile = self.meanwhile

        def then_check() -> None:
            real_meanwhile()
            try:
                unknown()
            except FollowUpError as exc:
                failures.append(str(exc))

        self.meanwhile = then_check

    monkeypatch.setattr(replay_plots.WorkerPlots, "__init__", asking_more)
    report = replay_offline(recorded, tmp_path / "out", processes=2, analysis=True)
    assert report.ok
    assert len(failures) == 1
    assert re.fullmatch(
        r"replay worker process \d+: no_such_follow_up: KeyError: 'no_such_follow_up'", failures[0]
    )


def test_digests_computed_while_the_plots_draw_are_the_ones_compared(recorded: Path, tmp_path: Path) -> None:
    report = replay_offline(recorded, tmp_path / "out", processes=1, analysis=True)
    original, replayed = RunDir.open(recorded), RunDir.open(report.replayed)
    known = db_digests(original, replayed)
    assert len(known) == 2 * len(list((recorded / "db").glob("*.db")))
    assert compare_runs(original, replayed, known) == compare_runs(original, replayed)
    # A digest only saves work: one that differs sends the pair to the full comparison, which decides.
    first = sorted((recorded / "db").glob("*.db"))[0]
    known[first] = "0" * 64
    assert compare_runs(original, replayed, known) == compare_runs(original, replayed)


def test_a_stop_asked_during_the_analysis_removes_the_replay_like_any_other_stop(
    recorded: Path, tmp_path: Path
) -> None:
    # A signal handler cancels the replay's task while the analysis runs, which never awaits: the
    # replay then finishes its last synchronous steps, and used to end "cancelled" with its whole
    # output left in place (the CLI said it was removed).
    out = tmp_path / "out"

    def analysis_then_stop(run: RunDir, settings: Any, draw_plots: writer.PlotDrawer) -> None:
        write_run_analysis(run, settings, draw_plots)
        task = asyncio.current_task()
        assert task is not None
        task.cancel()

    replay = replay_run(
        recorded, out, clock=FakeClock(), rand=random.Random(1), progress=False,
        after=analysis_then_stop, processes=2,
    )  # fmt: skip
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(replay)
    assert not out.exists()
    assert multiprocessing.active_children() == []


def test_a_replay_without_an_analysis_asks_nothing_of_its_worker(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    _on_call(monkeypatch, "warm_plots", lambda worker: asked.append("warm_plots"))
    _on_call(monkeypatch, "draw_plots", lambda worker: asked.append("draw_plots"))
    report = replay_offline(recorded, tmp_path / "out", processes=2, analysis=False)
    # (The recording has an analysis, so the replay without one reports those files missing.)
    assert all(c.ok for c in report.checks if not c.what.startswith("analysis/"))
    assert asked == []  # no matplotlib import in a worker for plots nobody draws
    assert multiprocessing.active_children() == []
