"""The post-run analysis pass: ``analysis/`` of a run directory under its own analysis settings."""

from __future__ import annotations

from pathlib import Path

from oracleproto.analysis.report import analyze_run
from oracleproto.analysis.writer import write_analysis
from oracleproto.settings import AnalysisSettings


def write_run_analysis(run_root: Path, settings: AnalysisSettings) -> list[Path]:
    """Compute every metric of ``run_root`` and write ``run_root/analysis`` (atomically)."""
    result = analyze_run(
        run_root,
        settings.convention,
        bootstrap_samples=settings.bootstrap_samples,
        seed=settings.seed,
    )
    return write_analysis(result, run_root / "analysis")
