"""Refresh audit: re-record a run live and explain what changed, from bytes to metrics.

Sits above the runner (a refresh is a run) and reads stores and cassettes only for the diff.
"""

from __future__ import annotations

from oracleproto.audit.classify import EntryChange, classify
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
