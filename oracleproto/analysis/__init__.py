"""Analysis: every metric of the paper from a run directory (reads stores only)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.analysis.conventions import Convention, parse_convention
    from oracleproto.analysis.cost import PriceTable, TokenPrice, load_prices
    from oracleproto.analysis.reader import ModelRun, RunData, read_run
    from oracleproto.analysis.reflection import reflection_ab
    from oracleproto.analysis.report import AnalysisResult, analyze, analyze_run
    from oracleproto.analysis.trials import TrialState, TrialTable
    from oracleproto.analysis.writer import summary_json, write_analysis

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "Convention": "oracleproto.analysis.conventions",
    "parse_convention": "oracleproto.analysis.conventions",
    "PriceTable": "oracleproto.analysis.cost",
    "TokenPrice": "oracleproto.analysis.cost",
    "load_prices": "oracleproto.analysis.cost",
    "ModelRun": "oracleproto.analysis.reader",
    "RunData": "oracleproto.analysis.reader",
    "read_run": "oracleproto.analysis.reader",
    "reflection_ab": "oracleproto.analysis.reflection",
    "AnalysisResult": "oracleproto.analysis.report",
    "analyze": "oracleproto.analysis.report",
    "analyze_run": "oracleproto.analysis.report",
    "TrialState": "oracleproto.analysis.trials",
    "TrialTable": "oracleproto.analysis.trials",
    "summary_json": "oracleproto.analysis.writer",
    "write_analysis": "oracleproto.analysis.writer",
}

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


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
