"""Conformance against another harness's capture: answer our requests with its responses.

``build_responder`` turns a capture file into an httpx transport; a run of ours goes through it
in record mode, and ``responder_report`` then says, per channel (llm, search, detector), how many
of our request bodies were byte-identical to the captured ones at the same logical position.
Names load on first use (PEP 562): the simulator imports the capture writer without httpx.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.conformance.build import build_responder
    from oracleproto.conformance.capture import CaptureError, CaptureExchange, CaptureWriter, read_capture
    from oracleproto.conformance.compare import Difference, compare_bodies
    from oracleproto.conformance.report import ConformanceReport, build_report, responder_report
    from oracleproto.conformance.responder import CaptureResponder

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "build_responder": "oracleproto.conformance.build",
    "CaptureError": "oracleproto.conformance.capture",
    "CaptureExchange": "oracleproto.conformance.capture",
    "CaptureWriter": "oracleproto.conformance.capture",
    "read_capture": "oracleproto.conformance.capture",
    "Difference": "oracleproto.conformance.compare",
    "compare_bodies": "oracleproto.conformance.compare",
    "ConformanceReport": "oracleproto.conformance.report",
    "build_report": "oracleproto.conformance.report",
    "responder_report": "oracleproto.conformance.report",
    "CaptureResponder": "oracleproto.conformance.responder",
}

__all__ = [
    "CaptureError",
    "CaptureExchange",
    "CaptureResponder",
    "CaptureWriter",
    "ConformanceReport",
    "Difference",
    "build_report",
    "build_responder",
    "compare_bodies",
    "read_capture",
    "responder_report",
]


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
