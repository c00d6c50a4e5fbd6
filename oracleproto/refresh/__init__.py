"""Refresh audit: re-record a run live and explain what changed, from bytes to metrics.

Sits above the runner (a refresh is a run) and reads stores and cassettes only for the diff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export
from oracleproto.refresh.classify import EntryChange, classify

if TYPE_CHECKING:
    from oracleproto.refresh.execute import RefreshOptions, RefreshResult, refresh_run
    from oracleproto.refresh.report import (
        audit_json,
        build_audit,
        render_markdown,
        summary_lines,
        write_audit,
        zero_drift,
    )
    from oracleproto.refresh.selector import Selector, parse_selector
    from oracleproto.refresh.views import CassetteView, load_view, previous_generation, split_ref

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "RefreshOptions": "oracleproto.refresh.execute",
    "RefreshResult": "oracleproto.refresh.execute",
    "refresh_run": "oracleproto.refresh.execute",
    "audit_json": "oracleproto.refresh.report",
    "build_audit": "oracleproto.refresh.report",
    "render_markdown": "oracleproto.refresh.report",
    "summary_lines": "oracleproto.refresh.report",
    "write_audit": "oracleproto.refresh.report",
    "zero_drift": "oracleproto.refresh.report",
    "Selector": "oracleproto.refresh.selector",
    "parse_selector": "oracleproto.refresh.selector",
    "CassetteView": "oracleproto.refresh.views",
    "load_view": "oracleproto.refresh.views",
    "previous_generation": "oracleproto.refresh.views",
    "split_ref": "oracleproto.refresh.views",
}

__all__ = [
    "CassetteView",
    "EntryChange",
    "RefreshOptions",
    "RefreshResult",
    "Selector",
    "audit_json",
    "build_audit",
    "classify",
    "load_view",
    "parse_selector",
    "previous_generation",
    "refresh_run",
    "render_markdown",
    "split_ref",
    "summary_lines",
    "write_audit",
    "zero_drift",
]


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
