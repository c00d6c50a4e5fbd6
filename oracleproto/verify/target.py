"""What ``oracleproto verify`` is given: a run directory, a panel, or a ``.tar.gz`` bundle."""

from __future__ import annotations

from pathlib import Path

from oracleproto.verify.findings import Progress, VerifyReport, quiet
from oracleproto.verify.run import verify_run


def verify_path(target: Path, *, dataset: Path | None = None, progress: Progress = quiet) -> VerifyReport:
    """A run directory or panel, or a ``.tar.gz`` bundle (imported into a temporary folder first)."""
    if target.is_file():
        from oracleproto.verify.bundle import verify_bundle

        return verify_bundle(target, dataset=dataset, progress=progress)
    return verify_run(target, dataset=dataset, progress=progress)
