"""Run a command's coroutine so that SIGTERM stops it the way Ctrl-C does.

``docker stop``, a cancelled CI job or a cluster scheduler send SIGTERM; Python's default is to
die at once (exit 143, no message, no cleanup). Here SIGTERM cancels the run's task with the
reason ``terminated`` as the cancel message: the runner logs ``run_aborted`` with that reason
and closes its cache and stores, exactly as for Ctrl-C, and the command prints how to resume.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import click

from oracleproto.cli.exits import EXIT_INTERRUPTED, EXIT_TERMINATED
from oracleproto.runner.stopping import INTERRUPTED, TERMINATED, resumable, signal_reason

T = TypeVar("T")

#: Stop reason → exit status (128 + the signal number, as shells report it).
EXIT_STATUS = {INTERRUPTED: EXIT_INTERRUPTED, TERMINATED: EXIT_TERMINATED}
_LABELS = {INTERRUPTED: "interrupted", TERMINATED: "terminated (SIGTERM)"}


class StoppedBySignalError(Exception):
    """The run was stopped by a signal; ``reason`` is ``interrupted`` or ``terminated``."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


def run_stoppable(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)``; SIGINT or SIGTERM cancels it and raises :class:`StoppedBySignalError`."""
    received: list[str] = []

    async def supervised() -> T:
        inner = asyncio.ensure_future(main)
        loop = asyncio.get_running_loop()

        def on_sigterm() -> None:
            received.append(TERMINATED)
            inner.cancel(TERMINATED)

        handled = threading.current_thread() is threading.main_thread()
        if handled:
            loop.add_signal_handler(signal.SIGTERM, on_sigterm)
        try:
            return await inner
        finally:
            if handled:
                loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(supervised())
    except KeyboardInterrupt:
        raise StoppedBySignalError(received[0] if received else INTERRUPTED) from None
    except asyncio.CancelledError as exc:
        raise StoppedBySignalError(received[0] if received else signal_reason(exc)) from None


def report_stopped(stop: StoppedBySignalError, subject: str, again: str) -> None:
    """Print which run stopped and the command that resumes it; exit 130 (SIGINT) or 143 (SIGTERM)."""
    click.echo(f"{_LABELS[stop.reason]}: {resumable(subject, again=again)}", err=True)
    raise SystemExit(EXIT_STATUS[stop.reason])
