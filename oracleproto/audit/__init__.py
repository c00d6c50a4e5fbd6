"""Refresh audit: re-record a run live and explain what changed, from bytes to metrics.

Sits above the runner (a refresh is a run) and reads stores and cassettes only for the diff.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export
from oracleproto.audit.classify import EntryChange, classify

if TYPE_CHECKING:
    from oracleproto.audit.refresh import RefreshOptions, RefreshResult, refresh_run
    from oracleproto.audit.report import (
        audit_json,
        build_audit,
        render_markdown,
        summary_lines,
        write_audit,
        zero_drift,
    )
    from oracleproto.audit.selector import Selector, parse_selector
    from oracleproto.audit.views import CassetteView, load_view, previous_generation, split_ref

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "RefreshOptions": "oracleproto.audit.refresh",
    "RefreshResult": "oracleproto.audit.refresh",
    "refresh_run": "oracleproto.audit.refresh",
    "audit_json": "oracleproto.audit.report",
    "build_audit": "oracleproto.audit.report",
    "render_markdown": "oracleproto.audit.report",
    "summary_lines": "oracleproto.audit.report",
    "write_audit": "oracleproto.audit.report",
    "zero_drift": "oracleproto.audit.report",
    "Selector": "oracleproto.audit.selector",
    "parse_selector": "oracleproto.audit.selector",
    "CassetteView": "oracleproto.audit.views",
    "load_view": "oracleproto.audit.views",
    "previous_generation": "oracleproto.audit.views",
    "split_ref": "oracleproto.audit.views",
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
