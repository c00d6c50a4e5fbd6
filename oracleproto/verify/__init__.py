"""Offline verification and publication of recorded runs: verify, attest, bundle, demo."""

from __future__ import annotations

from oracleproto.verify.attest import ATTESTATION_NAME, build_attestation, write_attestation
from oracleproto.verify.bundle import export_bundle, import_bundle
from oracleproto.verify.findings import Check, Status, VerifyReport
from oracleproto.verify.run import verify_path, verify_run
from oracleproto.verify.secret_scan import SecretHit, scan_bytes, scan_tree

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
