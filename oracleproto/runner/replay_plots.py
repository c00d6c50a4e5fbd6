"""A replay's plots drawn by a worker process done with its samples, while this one works on.

At 6×80×3 the analysis pass after the samples ran on one core: the metrics (≈ 0.5 s), then three
plots as PNG and SVG (≈ 1.3 s, plus ≈ 0.5 s to import matplotlib), then the comparison of the
databases (≈ 0.5 s). The worker that replayed part of the samples is idle by then: it imports
matplotlib as soon as its samples are in and draws the plots, while this process writes the
tables and computes the comparison's database digests (``meanwhile``). The plot files are the
same bytes whoever draws them (same code, same fixed matplotlib settings; the replay tests and
the demo compare them byte for byte). Whatever goes wrong on the worker's side, the plots are
drawn here instead, so the analysis never depends on the worker.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from oracleproto.analysis.report import AnalysisResult
from oracleproto.analysis.writer import PendingPlots, draw_here
from oracleproto.runner.replay_shards import FollowUpError, ReplayShard


class WorkerPlots:
    """A ``PlotDrawer`` that hands the plots to ``worker``; ``meanwhile`` runs here as they draw."""

    def __init__(self, worker: ReplayShard, meanwhile: Callable[[], None]) -> None:
        self.worker = worker
        self.meanwhile = meanwhile
        # Asked now, done by the worker as soon as its samples are in (before it is asked to draw);
        # its reply is read on the way to the drawing's, and a failure there is the drawing's.
        worker.call("warm_plots")

    def __call__(self, result: AnalysisResult, folder: Path) -> PendingPlots:
        """Start drawing ``result``'s plots into ``folder`` on the worker."""
        return _OnWorker(self, self.worker.call("draw_plots", result, folder), result, folder)


class _OnWorker:
    """Plots the worker is drawing."""

    def __init__(self, drawer: WorkerPlots, reply: Callable[[], None], result: AnalysisResult, folder: Path):
        self._drawer = drawer
        self._reply = reply
        self._result = result
        self._folder = folder

    def wait(self) -> None:
        """Run ``meanwhile``, then wait for the worker's plots (drawn here if it could not)."""
        self._drawer.meanwhile()
        try:
            self._reply()
        except FollowUpError:
            self.cancel()  # a worker half-way through a file must not write on after ours
            draw_here(self._result, self._folder)

    def cancel(self) -> None:
        """End the worker (it writes nothing more)."""
        self._drawer.worker.stop()
