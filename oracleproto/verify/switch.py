"""Replace several files of a run directory as one step that survives a kill at any moment.

A maintenance command that rewrites cassettes and re-seals the run (``cassettes gc --apply``:
cassette files, ``manifest.json``, ``attestation.json``) cannot rename several files at once, and
a kill between two renames used to leave a run whose seal no command could repair. So:

1. every new file is written and fsynced into ``.switch.staging/files/<its path>``, with
   ``plan.json`` naming what is replaced and what is deleted;
2. ``.switch.staging/`` is renamed to ``.switch/`` — the commit, one rename;
3. each staged file is moved into place, the deleted ones are removed, ``.switch/`` goes.

Killed before the commit, the old files are untouched (the staging folder is garbage, removed by
the next command). Killed after it, the next command that needs the seal (``verify``, ``bundle
export``, ``cassettes gc``) redoes step 3, which is idempotent: a file already moved is no longer
staged. A Ctrl-C during step 3 is held until it ends, so an interrupted switch is only ever left
by a kill. Both folders are not published (``attest.published_files`` skips them).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType

from oracleproto.errors import StoreError
from oracleproto.primitives import killpoints
from oracleproto.primitives.fileio import fsync_dir
from oracleproto.primitives.json_input import load_json
from oracleproto.primitives.paths import confined
from oracleproto.store import RunDir

STAGING_DIR = ".switch.staging"
COMMITTED_DIR = ".switch"
_PLAN = "plan.json"
_FILES = "files"


def _write_synced(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "xb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def discard_staging(root: Path) -> None:
    """Remove an uncommitted staging folder a killed command left (its switch never happened)."""
    staging = root / STAGING_DIR
    if staging.exists():
        shutil.rmtree(staging)


def switch_files(root: Path, operation: str, replace: Mapping[str, bytes], delete: Sequence[str]) -> None:
    """Stage ``replace`` (relative path → new bytes) and ``delete``, commit, then switch them in.

    The caller holds the run's writer lock. ``operation`` names the command in later messages.
    """
    discard_staging(root)
    staging = root / STAGING_DIR
    try:
        for rel in sorted(replace):
            _write_synced(confined(staging / _FILES, rel, what="switch", error=StoreError), replace[rel])
            killpoints.reached("switch-stage")
        plan = {"operation": operation, "replace": sorted(replace), "delete": sorted(delete)}
        _write_synced(staging / _PLAN, (json.dumps(plan, sort_keys=True, indent=1) + "\n").encode())
        fsync_dir(staging)
        killpoints.reached("switch-commit")
        os.rename(staging, root / COMMITTED_DIR)
    except BaseException:
        # Not committed: the old files are all in place, and so nothing of the new may stay.
        shutil.rmtree(staging, ignore_errors=True)
        raise
    fsync_dir(root)
    complete_switch(root)


def pending_switch(root: Path) -> str | None:
    """The operation of a committed switch not yet completed here, else None (reads only)."""
    plan = root / COMMITTED_DIR / _PLAN
    if not plan.is_file():
        return None
    return _read_plan(root)[0]


def _read_plan(root: Path) -> tuple[str, list[str], list[str]]:
    path = root / COMMITTED_DIR / _PLAN
    try:
        data = load_json(path.read_bytes())
        operation, replace, delete = data["operation"], data["replace"], data["delete"]
        if not (isinstance(operation, str) and isinstance(replace, list) and isinstance(delete, list)):
            raise TypeError("unexpected types")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StoreError(
            f"{path}: the plan of an interrupted maintenance switch is unreadable ({exc}); it was "
            "written before its commit, so this is damage: restore the run from a copy"
        ) from exc
    return operation, [str(r) for r in replace], [str(d) for d in delete]


def complete_switch(root: Path) -> str | None:
    """Finish a committed switch (move what is still staged, delete, remove ``.switch/``).

    Returns its operation, or None when there was none. Idempotent: a rerun after a kill in here
    moves only what is still staged. The caller holds the run's writer lock.
    """
    committed = root / COMMITTED_DIR
    if not committed.is_dir():
        return None
    operation, replace, delete = _read_plan(root)
    with _interrupts_held():
        for rel in replace:
            source = confined(committed / _FILES, rel, what="switch", error=StoreError)
            if source.is_file():
                killpoints.reached("switch-move")
                target = confined(root, rel, what="switch", error=StoreError)
                # A new file may go to a folder the run does not have yet: made, and each new
                # folder's entry synced in its parent too, so the file outlives a power cut.
                made = list(
                    itertools.takewhile(lambda f: not f.exists(), (target.parent, *target.parent.parents))
                )
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(source, target)
                fsync_dir(target.parent)
                for folder in made:
                    fsync_dir(folder.parent)
        for rel in delete:
            confined(root, rel, what="switch", error=StoreError).unlink(missing_ok=True)
        killpoints.reached("switch-moved")
        shutil.rmtree(committed)
        fsync_dir(root)
    return operation


def finish_interrupted(run: RunDir) -> str | None:
    """Before reading a run's seal: drop an uncommitted staging folder, finish a committed switch.

    Returns the operation finished (for a message), else None. Creates nothing when neither
    folder is there (a reviewer's read-only copy stays untouched).
    """
    if not (run.root / STAGING_DIR).exists() and not (run.root / COMMITTED_DIR).exists():
        return None
    with run.writer_lock():
        discard_staging(run.root)
        return complete_switch(run.root)


@contextlib.contextmanager
def _interrupts_held() -> Iterator[None]:
    """Hold a Ctrl-C (SIGINT) until the block ends, then raise it: a committed switch runs to its end.

    Only the main thread can own signal handlers; elsewhere the block runs unguarded (a kill there
    is still completed by the next command).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []

    def hold(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt
