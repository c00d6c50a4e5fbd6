"""What ``oracleproto runs list|show`` says about each run under a runs root: read only, never fails.

One :class:`RunInfo` per run directory: id, name and tags, when, models, questions × samples, its
state, whether it is sealed, and its size. A run whose manifest cannot be read is listed as
``damaged`` with the reason rather than stopping the listing.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracleproto.errors import OracleprotoError
from oracleproto.primitives.json_input import load_json
from oracleproto.primitives.sqlite_readonly import connect_readonly
from oracleproto.store.label import RunLabel, read_label
from oracleproto.store.manifest import Manifest
from oracleproto.store.naming import RUN_ID_RE, parse_virtual_slug
from oracleproto.store.rundir import RunDir

#: Sample errors that are admission decisions, not failed calls (``agent/result.py``).
_EXCLUSIONS = ("skipped_training_cutoff", "skipped_after_resolution")
ATTESTATION = "attestation.json"

#: The states a run can be in, in the order a reader acts on them.
STATES = {
    "recording": "another process is recording it now",
    "resumable": "stopped before it finished: rerun its command with --run-id to resume it",
    "failed": "finished, but samples ended in a call error: rerun its command with --run-id to retry them",
    "finished": "every slot done",
    "damaged": "its manifest.json cannot be read",
}


@dataclass(frozen=True)
class RunInfo:
    """One run directory, as ``runs list|show`` shows it."""

    run_id: str
    path: Path
    state: str
    detail: str = ""
    label: RunLabel = field(default_factory=RunLabel)
    started_at: str | None = None
    finished_at: str | None = None
    models: tuple[str, ...] = ()
    cells: int = 0
    questions: int = 0
    samples: int = 0
    errored: int | None = None
    #: ``sealed`` (attestation.json, and every file it lists still there at its size, the manifest
    #: at its digest: ``verify`` checks every byte), ``changed`` (not so), or ``unknown`` (no seal).
    seal: str = "unknown"
    size: int = 0

    def document(self) -> dict[str, Any]:
        """The ``--json`` form: every field, paths as strings."""
        return {
            "run_id": self.run_id,
            "path": str(self.path),
            "name": self.label.name,
            "tags": list(self.label.tags),
            "state": self.state,
            "detail": self.detail,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "models": list(self.models),
            "cells": self.cells,
            "questions": self.questions,
            "samples": self.samples,
            "errored_samples": self.errored,
            "verify": self.seal,
            "bytes": self.size,
        }


def tree_size(root: Path) -> int:
    """Bytes of every file under ``root`` (links not followed)."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            try:
                total += (Path(folder) / name).lstat().st_size
            except OSError:
                continue
    return total


def seal_status(root: Path) -> str:
    """``sealed``, ``changed`` or ``unknown``: a quick look at the attestation, not a verification."""
    path = root / ATTESTATION
    if not path.is_file():
        return "unknown"
    try:
        files = load_json(path.read_text(encoding="utf-8"))["files"]
        for rel, entry in files.items():
            if (root / rel).stat().st_size != entry["size"]:
                return "changed"
        manifest = (root / "manifest.json").read_bytes()
        if hashlib.sha256(manifest).hexdigest() != files["manifest.json"]["sha256"]:
            return "changed"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "changed"
    return "sealed"


def errored_samples(run: RunDir, manifest: Manifest) -> int | None:
    """Stored samples that ended in a call error (admission exclusions are not errors); None if unknown."""
    total = 0
    try:
        paths = run.model_db_paths(manifest)
    except OracleprotoError:
        return None
    marks = ", ".join("?" for _ in _EXCLUSIONS)
    for path in paths.values():
        try:
            with closing(connect_readonly(path)) as conn:
                n = int(conn.execute("SELECT sampling_n FROM run_meta").fetchone()[0])
                for i in range(n):
                    column = f"s{i}_error"
                    sql = (
                        f"SELECT count(*) FROM run_results WHERE {column} IS NOT NULL "
                        f"AND {column} NOT IN ({marks})"
                    )
                    total += int(conn.execute(sql, _EXCLUSIONS).fetchone()[0])
        except (sqlite3.Error, TypeError, ValueError, OSError):
            return None
    return total


def _state(run: RunDir, manifest: Manifest, errored: int | None) -> tuple[str, str]:
    from oracleproto.transport.store import has_leftover_journal  # only when a run is described

    writer = run.active_writer()
    if writer is not None:
        return "recording", f"{STATES['recording']} (pid {writer})"
    if manifest.finished_at is None or has_leftover_journal(run.cassettes_dir):
        return "resumable", STATES["resumable"]
    if errored:
        return (
            "failed",
            f"{errored} sample(s) ended in a call error: rerun its command with --run-id to retry them",
        )
    return "finished", STATES["finished"]


def describe_run(root: Path) -> RunInfo:
    """The facts of the run directory ``root``; a damaged one says why instead of raising."""
    run = RunDir(root, root.name)
    label = read_label(root)
    size = tree_size(root)
    try:
        manifest = run.load_manifest()
    except OracleprotoError as exc:
        return RunInfo(root.name, root, "damaged", str(exc), label=label, size=size)
    errored = errored_samples(run, manifest)
    state, detail = _state(run, manifest, errored)
    real = tuple(dict.fromkeys(_real(slug) for slug in manifest.models))
    return RunInfo(
        run_id=manifest.run_id,
        path=root,
        state=state,
        detail=detail,
        label=label,
        started_at=manifest.started_at,
        finished_at=manifest.finished_at,
        models=real,
        cells=len(manifest.models),
        questions=manifest.filters.question_count,
        samples=manifest.sampling_n,
        errored=errored,
        seal=seal_status(root),
        size=size,
    )


def _real(slug: str) -> str:
    try:
        return parse_virtual_slug(slug)[0]
    except OracleprotoError:
        return slug


def list_runs(runs_root: Path) -> list[RunInfo]:
    """Every run directory under ``runs_root`` (folders named like run ids), oldest first."""
    try:
        folders = sorted(p for p in runs_root.iterdir() if RUN_ID_RE.fullmatch(p.name) and p.is_dir())
    except FileNotFoundError:
        return []
    return [describe_run(folder) for folder in folders]
