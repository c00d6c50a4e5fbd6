"""The post-run analysis pass: ``analysis/`` of a run directory under its own analysis settings."""

from __future__ import annotations

from pathlib import Path

from oracleproto.analysis.heap import release_heap
from oracleproto.analysis.prices import PriceTable
from oracleproto.analysis.report import AnalysisResult, analyze_run
from oracleproto.analysis.writer import PlotDrawer, draw_here, write_analysis
from oracleproto.settings.model import AnalysisSettings


def analyze_with_settings(
    run_root: Path, settings: AnalysisSettings, *, revision: int | None = None
) -> AnalysisResult:
    """Every metric of ``run_root`` under the run's analysis settings (the pass and ``verify``).

    ``revision``: an older analysis revision's definitions (``verify`` of a run it published).
    """
    credit = settings.tavily_usd_per_credit
    return analyze_run(
        run_root,
        settings.convention,
        prices=None if credit is None else PriceTable({}, search_usd_per_credit=credit),
        bootstrap_samples=settings.bootstrap_samples,
        seed=settings.seed,
        revision=revision,
    )


def write_run_analysis(
    run_root: Path, settings: AnalysisSettings, draw_plots: PlotDrawer = draw_here
) -> list[Path]:
    """Compute every metric of ``run_root`` and write ``run_root/analysis`` (atomically)."""
    # The pass runs after a whole run in the same process: start it from a trimmed heap, so its
    # peak does not grow with the run (analysis/heap.py).
    release_heap()
    result = analyze_with_settings(run_root, settings)
    return write_analysis(result, run_root / "analysis", draw_plots=draw_plots)
