"""Analysis: every metric of the paper from a run directory (reads stores only)."""

from __future__ import annotations

from oracleproto.analysis.conventions import Convention, parse_convention
from oracleproto.analysis.cost import PriceTable, TokenPrice, load_prices
from oracleproto.analysis.reader import ModelRun, RunData, read_run
from oracleproto.analysis.reflection import reflection_ab
from oracleproto.analysis.report import AnalysisResult, analyze, analyze_run
from oracleproto.analysis.trials import TrialState, TrialTable
from oracleproto.analysis.writer import summary_json, write_analysis

__all__ = [
    "AnalysisResult",
    "Convention",
    "ModelRun",
    "PriceTable",
    "RunData",
    "TokenPrice",
    "TrialState",
    "TrialTable",
    "analyze",
    "analyze_run",
    "load_prices",
    "parse_convention",
    "read_run",
    "reflection_ab",
    "summary_json",
    "write_analysis",
]
