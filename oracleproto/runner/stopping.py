"""How a run stops early and stays resumable: stop reasons and the one "resume it" message.

A signal stops a run by cancelling its task with the reason as the cancel message (SIGINT →
``interrupted``, SIGTERM → ``terminated``); the runner logs ``run_aborted`` with that reason.
Every message that tells the user a run can be resumed is built by :func:`resumable`, so the
wording and the command are the same for Ctrl-C, SIGTERM, a revoked key and a full disk.
"""

from __future__ import annotations

import asyncio
import signal

from oracleproto.errors import DiskFullError
from oracleproto.runner.runlog import RunLog

INTERRUPTED = "interrupted"
TERMINATED = "terminated"
#: Signal → the reason a run stopped for it (the cancel message, the ``run_aborted`` reason).
SIGNAL_REASONS: dict[int, str] = {signal.SIGINT: INTERRUPTED, signal.SIGTERM: TERMINATED}
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
