"""The run directory ``{runs_root}/{run_id}/`` (run-layout.md) and its fixed sub-paths."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from oracleproto.errors import StoreError
from oracleproto.primitives.oslock import lock_exclusive, lock_shared, unlock
from oracleproto.primitives.paths import confined
from oracleproto.store.manifest import MANIFEST_NAME, Manifest
from oracleproto.store.naming import RUN_ID_RE, model_file_name, validate_run_id

DB_DIR = "db"
ANALYSIS_DIR = "analysis"
#: The file an analysis pass writes last in ``analysis/``: the folder is this tool's, and complete.
ANALYSIS_MARKER = ".oracleproto-analysis"
#: The sub-folder of ``analysis/`` holding the refresh audit: the analysis pass does not own it
#: (it keeps it across rewrites) and a replay does not reproduce it (verify checks it instead).
AUDIT_SUBDIR = "audit"
#: The sub-folder of ``analysis/`` ``report --convention points-f1`` writes without ``--out``: a
#: report beside the sealed analysis, regenerated on demand, so the analysis pass keeps it, a
#: replay does not reproduce it and it is not published (attestation, bundles).
POINTS_F1_SUBDIR = "points-f1"
#: Every sub-folder of ``analysis/`` holding a report written on demand beside the sealed analysis:
#: ``report`` without ``--out`` writes a convention other than the run's own into
#: ``analysis/<convention>/`` (points-f1 always). Like points-f1's, these folders are kept by the
#: analysis pass, skipped by ``verify`` and ``replay``, and not published.
ON_DEMAND_SUBDIRS = (POINTS_F1_SUBDIR, "paper", "reference-v4")
LOGS_DIR = "logs"
#: Our addition: the default cassette folder inside the run directory.
CASSETTES_DIR = "cassettes"
#: Our addition: locked by the one process writing the run; not published (attestation, bundles).
WRITER_LOCK = ".lock"
#: Our addition: the panel manifest of a panel directory (``oracleproto panel build``, panel/).
PANEL_NAME = "panel.json"
#: Sub-folders holding a run's data: non-empty in a directory without a manifest means not ours.
_DATA_DIRS = frozenset({DB_DIR, ANALYSIS_DIR, LOGS_DIR})
_LAYOUT_NAMES = _DATA_DIRS | {CASSETTES_DIR, WRITER_LOCK}


@dataclass(frozen=True)
class RunDir:
    """Paths of one run directory; creating it makes the four sub-folders."""

    root: Path
    run_id: str

    @classmethod
    def create(cls, runs_root: Path, run_id: str) -> RunDir:
        """Create (or re-enter, for resume) ``runs_root/run_id`` with its sub-folders."""
        validate_run_id(run_id)
        run = cls(runs_root / run_id, run_id)
        if run.root.exists() and not run.root.is_dir():
            raise StoreError(f"{run.root}: exists and is not a directory; remove it or pick another run id")
        for sub in (run.db_dir, run.analysis_dir, run.logs_dir, run.cassettes_dir):
            sub.mkdir(parents=True, exist_ok=True)
        return run

    @classmethod
    def at(cls, runs_root: Path, run_id: str) -> RunDir:
        """The run directory ``runs_root/run_id``, which may not exist yet; nothing is created."""
        return cls(runs_root / validate_run_id(run_id), run_id)

    def existing_manifest(self) -> Manifest | None:
        """The manifest of a run to resume; None when there is no run here yet. Reads only.

        A directory without a manifest is accepted only when it holds nothing but our layout
        before any run data: the folder names of a run, empty ``db/``, ``analysis/`` and
        ``logs/`` (a start interrupted before its manifest), and possibly cassettes (prepared
        for a replay). Anything else belongs to someone else, and nothing may be written into it.
        """
        if not self.root.exists():
            return None
        if not self.root.is_dir():
            raise StoreError(f"{self.root}: exists and is not a directory; remove it or pick another run id")
        if self.manifest_path.is_file():
            return self.load_manifest()
        foreign = sorted(
            child.name
            for child in self.root.iterdir()
            if child.name not in _LAYOUT_NAMES
            or (child.name in _DATA_DIRS and (not child.is_dir() or any(child.iterdir())))
            or (child.name == CASSETTES_DIR and not child.is_dir())
        )
        if foreign:
            shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
            raise StoreError(
                f"{self.root} exists but is not an oracleproto run directory (no {MANIFEST_NAME}; it holds "
                f"{shown}); nothing was written to it. Pick another run id (or leave out --run-id for a "
                "new one) or another runs root"
            )
        return None

    def refuse_if_being_written(self) -> None:
        """Refuse at once when another process holds the writer lock; creates nothing."""
        writer = self.active_writer()
        if writer is not None:
            raise self._being_written(self.root / WRITER_LOCK, writer)

    def _being_written(self, path: Path, holder: str) -> StoreError:
        return StoreError(
            f"run {self.run_id} is being written by another process (pid {holder or 'unknown'}, "
            f"lock {path}); wait for it to finish or stop it, then rerun with the same --run-id"
        )

    @contextmanager
    def writer_lock(self) -> Iterator[None]:
        """Hold the run's writer lock: a second process writing the same run id is refused at once.

        Two processes resuming one run would both redo the same pending slots. The lock is an
        OS file lock (flock; msvcrt on Windows), so the kernel drops it when its holder dies
        (kill -9 included): a stale lock file never blocks a resume.
        """
        path = self.root / WRITER_LOCK
        handle = path.open("a+", encoding="utf-8")
        try:
            try:
                lock_exclusive(handle.fileno(), blocking=False)
            except BlockingIOError:
                handle.seek(0)
                raise self._being_written(path, handle.read().strip()) from None
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            try:
                yield
            finally:
                unlock(handle.fileno())
        finally:
            handle.close()

    def active_writer(self) -> str | None:
        """The pid of the process holding the writer lock now (``"unknown"`` if unrecorded), else None.

        Read-only: a missing lock file means no writer, and none is created.
        """
        try:
            handle = (self.root / WRITER_LOCK).open("r", encoding="utf-8")
        except OSError:
            return None
        with handle:
            try:
                lock_shared(handle.fileno(), blocking=False)
            except BlockingIOError:
                return handle.read().strip() or "unknown"
            unlock(handle.fileno())
        return None

    def require_idle(self, then: str) -> None:
        """Refuse a run another process is recording now: its files are still changing.

        ``then`` says what to do once it has finished (e.g. "verify the run").
        """
        writer = self.active_writer()
        if writer is not None:
            raise StoreError(
                f"run {self.run_id} is being recorded right now by another process (pid {writer}, lock "
                f"{self.root / WRITER_LOCK}); wait for that process to finish, then {then}"
            )

    @classmethod
    def open(cls, path: Path) -> RunDir:
        """An existing run directory; its folder name must be a run id and it must hold a manifest."""
        if not path.is_dir():
            raise StoreError(
                f"{path}: run directory not found; pass a run directory (RUNS_ROOT/<run id>) or a run id"
            )
        if not RUN_ID_RE.fullmatch(path.name) and (path / PANEL_NAME).is_file():
            # A panel (``oracleproto panel build``) is read like a run under any folder name.
            return cls(path, Manifest.load(path / MANIFEST_NAME).run_id)
        if not RUN_ID_RE.fullmatch(path.name):
            raise StoreError(
                f"{path}: not a run directory (a run directory is named by its run id, "
                "YYYYMMDD-HHMMSS-xxxx, and holds manifest.json); pass a run directory (RUNS_ROOT/<run id>) "
                "or a run id"
            )
        run = cls(path, path.name)
        if not run.manifest_path.is_file():
            raise StoreError(
                f"{run.manifest_path}: manifest not found; {path} is not a complete run directory"
            )
        return run

    @classmethod
    def resolve(cls, ref: str, runs_root: Path) -> RunDir:
        """Open ``ref`` as a run directory path, or as a run id under ``runs_root``."""
        if RUN_ID_RE.fullmatch(ref) and not Path(ref).is_dir():
            return cls.open(runs_root / ref)
        return cls.open(Path(ref))

    @property
    def manifest_path(self) -> Path:
        """``manifest.json``."""
        return self.root / MANIFEST_NAME

    @property
    def db_dir(self) -> Path:
        """``db/``: one SQLite per virtual model slug."""
        return self.root / DB_DIR

    @property
    def analysis_dir(self) -> Path:
        """``analysis/``: regenerated from db/ by the analysis pass."""
        return self.root / ANALYSIS_DIR

    @property
    def logs_dir(self) -> Path:
        """``logs/``."""
        return self.root / LOGS_DIR

    @property
    def log_path(self) -> Path:
        """``logs/{run_id}.log``."""
        return self.logs_dir / f"{self.run_id}.log"

    @property
    def cassettes_dir(self) -> Path:
        """Default cassette folder (our addition); the manifest may name another relative one."""
        return self.root / CASSETTES_DIR

    def db_path(self, slug: str) -> Path:
        """The SQLite file of a virtual slug."""
        return self.db_dir / model_file_name(slug)

    def load_manifest(self) -> Manifest:
        """Read and validate ``manifest.json``; its run id must match the folder name."""
        manifest = Manifest.load(self.manifest_path)
        if manifest.run_id != self.run_id:
            raise StoreError(
                f"{self.manifest_path}: run_id {manifest.run_id!r} does not match the directory name "
                f"{self.run_id!r}; rename the directory back to its run id"
            )
        return manifest

    def write_manifest(self, manifest: Manifest) -> None:
        """Write ``manifest.json`` atomically (run id must match the folder name)."""
        if manifest.run_id != self.run_id:
            raise StoreError(
                f"manifest run_id {manifest.run_id!r} does not match run directory {self.run_id!r}"
            )
        manifest.write(self.manifest_path)

    def model_db_paths(self, manifest: Manifest) -> dict[str, Path]:
        """Virtual slug → DB path, in manifest order; a listed file that is missing is an error."""
        out: dict[str, Path] = {}
        for slug in manifest.models:
            name = manifest.model_files.get(slug)
            if name is None:
                raise StoreError(f"{self.manifest_path}: model {slug!r} has no entry in model_files")
            if Path(name).name != name:
                raise StoreError(
                    f"{self.manifest_path}: model_files[{slug!r}] = {name!r} is not a bare file name"
                )
            path = confined(
                self.db_dir, name, what=f"{self.manifest_path}: model_files[{slug!r}]", error=StoreError
            )
            if not path.is_file():
                raise StoreError(f"{path}: database of model {slug!r} is missing from {self.db_dir}")
            out[slug] = path
        return out

    def cassette_path(self, manifest: Manifest) -> Path:
        """The cassette folder the manifest records, or the default one."""
        if manifest.cassettes is None:
            return self.cassettes_dir
        return confined(
            self.root, manifest.cassettes.dir, what=f"{self.manifest_path}: cassettes.dir", error=StoreError
        )
