"""How a run stops early and stays resumable: stop reasons and the one "resume it" message.

A signal stops a run by cancelling its task with the reason as the cancel message (SIGINT →
``interrupted``, SIGTERM → ``terminated``); the runner logs ``run_aborted`` with that reason.
Every message that tells the user a run can be resumed is built by :func:`resumable`, so the
wording and the command are the same for Ctrl-C, SIGTERM, a revoked key and a full disk.
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from oracleproto.errors import DiskFullError, OracleprotoError
from oracleproto.runner.runlog import RunLog
from oracleproto.transport.store import DISK_FULL_ERRNOS

INTERRUPTED = "interrupted"
TERMINATED = "terminated"
#: Signal → the reason a run stopped for it (the cancel message, the ``run_aborted`` reason).
#: Reason → what the run log and the terminal say happened.
STOP_MESSAGES = {
    INTERRUPTED: "interrupted by the user (SIGINT)",
    TERMINATED: "terminated by SIGTERM (docker stop, a cancelled job, a scheduler)",
}


def signal_reason(exc: BaseException) -> str:
    """The reason carried by a cancellation (its message), else ``interrupted`` (Ctrl-C)."""
    if isinstance(exc, asyncio.CancelledError) and exc.args and exc.args[0] in STOP_MESSAGES:
        return str(exc.args[0])
    return INTERRUPTED


def resume_arguments(run_id: str) -> str:
    """The arguments that resume a run: the same command with ``--run-id``."""
    return f"--run-id {run_id}"


def resumable(subject: str, *, again: str, fix: str | None = None) -> str:
    """``<subject> stopped and is resumable: [<fix>, then ]rerun with <again> (…)``.

    ``subject`` names what stopped (``run X``, ``refresh X of Y``); ``again`` is the arguments that
    resume it (:func:`resume_arguments` for a run); ``fix`` is what the user must do first.
    """
    first = f"{fix}, then rerun" if fix else "rerun"
    return f"{subject} stopped and is resumable: {first} with {again} (finished samples are kept)"


def disk_full_abort(full: DiskFullError, run_id: str, log: RunLog) -> DiskFullError:
    """Log the run's abort on a full disk; the error again, with the command that resumes the run."""
    log.event("run_aborted", reason="disk_full", message=str(full))
    log.close()
    hint = resumable(f"run {run_id}", again=resume_arguments(run_id), fix="free the space")
    return DiskFullError(f"{full}\n{hint}", needed_bytes=full.needed_bytes)


def disk_full_of(exc: BaseException, run_root: Path) -> DiskFullError | None:
    """``exc`` as a full disk of the run's filesystem, else None.

    SQLite reports a full disk met mid-write as its own ``SQLITE_FULL`` ("database or disk is
    full"), not as errno ENOSPC: both are the same fix for the user (free space, resume).
    """
    if isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS:
        why = exc.strerror or "no space left on the device"
    elif isinstance(exc, sqlite3.OperationalError) and exc.sqlite_errorcode == sqlite3.SQLITE_FULL:
        why = f"a model DB could not be written ({exc})"
    else:
        return None
    return DiskFullError(f"{run_root}: {why}; free space on the filesystem holding it")


class _Closable(Protocol):
    def close(self) -> None: ...


def close_all(stores: Iterable[_Closable]) -> None:
    """Close every store; while an error is already propagating, a close that fails too is dropped.

    Called from a ``finally``: a full disk that stopped the run also fails each DB's closing
    checkpoint, and that second, generic SQLite error used to replace the first one — which says
    what filled up, how much to free and how to resume. Without an error in flight, a failed
    close is raised (after trying the other stores).
    """
    failing = sys.exc_info()[1] is not None
    first: BaseException | None = None
    for store in stores:
        try:
            store.close()
        except (OSError, sqlite3.Error) as exc:
            first = first or exc
    if first is not None and not failing:
        raise first


def first_failure(group: BaseExceptionGroup[BaseException], run_root: Path) -> BaseException:
    """The error that ends a run from its task group: the first of ours, or of a full disk.

    A sample's store meeting a full disk raises inside the group; it must come out as one error
    the caller names as a full disk, not as an exception group (reported as a bug). Any other
    I/O error is unexpected: the group goes on as it is.
    """
    if any(
        not isinstance(exc, OracleprotoError) and disk_full_of(exc, run_root) is None
        for exc in group.exceptions
    ):
        raise group
    return group.exceptions[0]
