"""The bundled demo run: recorded against the provider simulator, published under ``cassettes/demo/``.

Re-recording is one command (``make demo-record``): it records into a temporary folder, makes the
run directory publishable (no logs, no SQLite side files, rollback-journal DBs, an attestation),
then replaces ``cassettes/demo/``; ``make demo-record`` then refreshes the expected tables
(the ``golden/demo/`` snapshot of ``tests/demo``).
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from oracleproto.dataset.demo import demo_db_path
from oracleproto.demo_archive import DemoArchiveError, archive_digest, extract_archive, packaged_archive
from oracleproto.errors import StoreError
from oracleproto.store import RunDir
from oracleproto.verify.attest import write_attestation
from oracleproto.verify.findings import Progress, quiet

if TYPE_CHECKING:
    from oracleproto.settings.model import Settings

#: Fixed so re-recording replaces the same folder and the README's commands stay valid.
DEMO_RUN_ID = "20260101-000000-de00"
DEMO_MODELS = 3
DEMO_SAMPLES = 3
DEMO_SEED = 0
DEMO_DIR = Path("cassettes") / "demo"


def source_checkout() -> Path:
    """The repository root when oracleproto runs from a source checkout (editable install)."""
    return Path(__file__).resolve().parents[2]  # oracleproto/verify/demo.py


def find_demo_run(cwd: Path | None = None) -> Path:
    """The published demo run directory: in the source checkout, else under the working folder,
    else the installed package's copy (extracted once into the user's cache folder)."""
    candidates = [source_checkout() / DEMO_DIR / DEMO_RUN_ID, (cwd or Path.cwd()) / DEMO_DIR / DEMO_RUN_ID]
    for path in candidates:
        if (path / "manifest.json").is_file():
            return path
    archive = packaged_archive()
    if archive is not None:
        return _extract(archive, demo_cache_dir() / archive_digest(archive)[:16])
    tried = ", ".join(str(p) for p in candidates)
    raise StoreError(
        f"the demo run is not here (tried {tried}) and this installation ships no demo archive; "
        "run from a clone of the repository, install the wheel, or record it with `make demo-record`"
    )


def demo_cache_dir() -> Path:
    """Where an installed package extracts its demo run: ``$XDG_CACHE_HOME/oracleproto/demo``."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "oracleproto" / "demo"


def _extract(archive: Path, parent: Path) -> Path:
    try:
        run = extract_archive(archive, parent)
    except DemoArchiveError as exc:
        raise StoreError(str(exc)) from None
    except OSError as exc:
        raise StoreError(
            f"cannot extract the packaged demo run into {parent} ({exc.strerror or exc}); "
            "set XDG_CACHE_HOME to a writable folder, or run `oracleproto demo fetch` here"
        ) from None
    if run.name != DEMO_RUN_ID:
        raise StoreError(f"{archive}: holds run {run.name}, expected {DEMO_RUN_ID}; reinstall oracleproto")
    return run


def fetch_demo(dest: Path, *, force: bool = False) -> Path:
    """Copy the demo run to ``dest/cassettes/demo/<run id>`` (where a clone has it); returns that folder.

    From the installed package's archive, or, in a source checkout, from its ``cassettes/demo``.
    An existing copy is refused unless ``force`` (then replaced).
    """
    target = dest / DEMO_DIR / DEMO_RUN_ID
    if target.exists():
        if not force:
            raise StoreError(
                f"{target} already exists; it is the demo run (`oracleproto replay demo` uses it), "
                "or pass --force to replace it"
            )
        shutil.rmtree(target)
    archive = packaged_archive()
    if archive is not None:
        return _extract(archive, target.parent)
    source = source_checkout() / DEMO_DIR / DEMO_RUN_ID
    if not (source / "manifest.json").is_file():
        raise StoreError("this installation ships no demo run; install the wheel or use a clone")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, target)
    return target


def _analysis(run: RunDir, settings: Settings) -> None:
    from oracleproto.analysis.postrun import write_run_analysis

    write_run_analysis(run.root, settings.analysis)


def make_publishable(run_root: Path) -> None:
    """Drop what is not reproducible or not needed (logs, locks, side files); seal with an attestation."""
    shutil.rmtree(run_root / "logs", ignore_errors=True)
    for junk in ("*-wal", "*-shm", ".lock"):
        for path in run_root.rglob(junk):
            path.unlink()
    shutil.rmtree(run_root / "cassettes" / ".journal", ignore_errors=True)
    for db in sorted((run_root / "db").glob("*.db")):
        # Rollback journal: read-only readers of a fresh clone then create no -wal/-shm files.
        conn = sqlite3.connect(db)
        try:
            conn.execute("PRAGMA journal_mode = DELETE")
            conn.execute("VACUUM")
        finally:
            conn.close()
    write_attestation(run_root)


def record_demo(repo: Path, *, progress: Progress = quiet, show_progress: bool = True) -> Path:
    """Record the demo with the simulator and replace ``repo/cassettes/demo`` with it."""
    # The runner and the simulator are imported here, not with the module: `verify demo`,
    # `replay demo` and `view demo` only look the demo run up (find_demo_run) and never record.
    from oracleproto.primitives.clock import SystemClock
    from oracleproto.runner.execute import RunOptions, execute_run
    from oracleproto.sim.harness import SimRunSpec, simulated_settings
    from oracleproto.sim.server import SimConfig, Simulator

    with tempfile.TemporaryDirectory(prefix="oracleproto-demo-") as tmp:
        runs_root = Path(tmp)
        spec = SimRunSpec(models=DEMO_MODELS, samples=DEMO_SAMPLES, runs_root=runs_root, detector=True)
        progress("recording against the simulator")
        with Simulator(SimConfig(seed=DEMO_SEED)) as sim:
            settings = simulated_settings(sim, spec)
            settings = settings.model_copy(
                update={"run": settings.run.model_copy(update={"write_messages_trace": True})}
            )
            options = RunOptions(
                settings=settings,
                source_db=demo_db_path(),
                runs_root=runs_root,
                mode="record",
                run_id=DEMO_RUN_ID,
                progress=show_progress,
                after=_analysis,
            )
            asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(DEMO_SEED)))
        recorded = runs_root / DEMO_RUN_ID
        progress("sealing the run")
        make_publishable(recorded)
        target_root = repo / DEMO_DIR
        shutil.rmtree(target_root, ignore_errors=True)
        target_root.mkdir(parents=True)
        shutil.copytree(recorded, target_root / DEMO_RUN_ID)
    return target_root / DEMO_RUN_ID
