"""Offline verification and publication of recorded runs: verify, attest, bundle, demo."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.verify.attest import ATTESTATION_NAME, build_attestation, write_attestation
    from oracleproto.verify.bundle import export_bundle, import_bundle
    from oracleproto.verify.findings import Check, Status, VerifyReport
    from oracleproto.verify.run import verify_run
    from oracleproto.verify.secret_scan import SecretHit, scan_bytes, scan_tree
    from oracleproto.verify.target import verify_path

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "ATTESTATION_NAME": "oracleproto.verify.attest",
    "build_attestation": "oracleproto.verify.attest",
    "write_attestation": "oracleproto.verify.attest",
    "export_bundle": "oracleproto.verify.bundle",
    "import_bundle": "oracleproto.verify.bundle",
    "Check": "oracleproto.verify.findings",
    "Status": "oracleproto.verify.findings",
    "VerifyReport": "oracleproto.verify.findings",
    "verify_path": "oracleproto.verify.target",
    "verify_run": "oracleproto.verify.run",
    "SecretHit": "oracleproto.verify.secret_scan",
    "scan_bytes": "oracleproto.verify.secret_scan",
    "scan_tree": "oracleproto.verify.secret_scan",
}

__all__ = [
    "ATTESTATION_NAME",
    "Check",
    "SecretHit",
    "Status",
    "VerifyReport",
    "build_attestation",
    "export_bundle",
    "import_bundle",
    "scan_bytes",
    "scan_tree",
    "verify_path",
    "verify_run",
    "write_attestation",
]


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
