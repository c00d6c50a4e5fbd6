"""What ``view`` reads: a run directory as is, or a bundle extracted (checked) into a temporary folder."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from oracleproto.verify.bundle import import_bundle
from oracleproto.verify.findings import Progress, VerifyReport, quiet
from oracleproto.verify.run import verify_run


@dataclass(frozen=True)
class OpenedRun:
    """A run directory to read, the name to show for it, and a dataset a bundle shipped."""

    root: Path
    label: str
    dataset: Path | None = None


@contextmanager
def opened_run(target: Path) -> Iterator[OpenedRun]:
    """``target`` as a run directory; a bundle file is imported (every member's sha256 checked) first."""
    if not target.is_file():
        yield OpenedRun(target, target.name)
        return
    # import_bundle refuses members leaving the folder, links and devices; nothing is executed.
    with tempfile.TemporaryDirectory(prefix="oracleproto-view-") as tmp:
        imported = import_bundle(target, Path(tmp) / "bundle")
        yield OpenedRun(imported.run_dir, target.name, imported.dataset)


def verify_opened(run: OpenedRun, *, progress: Progress = quiet) -> VerifyReport:
    """``verify``'s checks on the run (no re-execution), with the dataset a bundle carried."""
    extra = () if run.dataset is None else (run.dataset,)
    return verify_run(run.root, extra_datasets=extra, progress=progress)
