"""The one top-level handler: every failure of a command becomes one message and an exit status.

Known errors (``OracleprotoError``, click usage errors) keep their own messages. File-system and
SQLite errors that reach the top are described with their path, the errno's meaning and a fix.
Anything else is a bug: one line asks for a report and names where the traceback went (the
run log when a run was open, else a crash file in the user's state directory), never the
terminal — unless ``ORACLEPROTO_TRACEBACK=1`` asks for it there too.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import traceback
from datetime import UTC, datetime
from pathlib import Path

import click

from oracleproto.cli.exits import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    stopped_exit_status,
)
from oracleproto.errors import OracleprotoError, RunStoppedError
from oracleproto.primitives.oserrors import describe_os_error
from oracleproto.primitives.redact import redact_urls_in_text
from oracleproto.runner.runlog import append_internal_error, last_run_log

#: Set to 1 to also print the traceback of an internal error on the terminal.
TRACEBACK_ENV = "ORACLEPROTO_TRACEBACK"


def describe_unicode_error(exc: UnicodeDecodeError) -> str:
    """The offending byte and its offset; which file is up to the caller that knows it."""
    byte = exc.object[exc.start : exc.start + 1].hex() if isinstance(exc.object, bytes) else "?"
    return (
        f"a file is not valid {exc.encoding} text: byte 0x{byte} at offset {exc.start} ({exc.reason}); "
        "re-save it as UTF-8"
    )


def exit_for(exc: BaseException) -> tuple[int, str] | None:
    """The exit status and message of a failure the user can fix, or None for a bug."""
    if isinstance(exc, RunStoppedError):
        return stopped_exit_status(exc), f"error: {exc}"
    if isinstance(exc, OracleprotoError):
        return EXIT_INVALID, f"error: {exc}"
    if isinstance(exc, KeyboardInterrupt | click.exceptions.Abort):
        return EXIT_INTERRUPTED, "interrupted"
    if isinstance(exc, OSError):
        return EXIT_INVALID, f"error: {describe_os_error(exc, '(file unknown)')}"
    if isinstance(exc, sqlite3.OperationalError):
        return EXIT_INVALID, (
            f"error: a SQLite database could not be used ({exc}); check that it is a complete, readable "
            "(and for writes, writable) database file"
        )
    if isinstance(exc, sqlite3.DatabaseError):
        return EXIT_INVALID, f"error: a SQLite database is corrupt or not a database ({exc}); restore it"
    if isinstance(exc, UnicodeDecodeError):
        return EXIT_INVALID, f"error: {describe_unicode_error(exc)}"
    if isinstance(exc, MemoryError):
        return EXIT_INVALID, "error: out of memory reading the input; it is too large or hostile"
    return None


def crash_dir() -> Path:
    """Where crash files go: ``$XDG_STATE_HOME/oracleproto`` (``~/.local/state/oracleproto``)."""
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state) / "oracleproto"


def write_crash_report(exc: BaseException) -> Path | None:
    """Write the traceback to the run log of this process (if any) or a crash file; return it."""
    # Exception messages may quote a URL: its credentials stay out of the crash report.
    text = redact_urls_in_text("".join(traceback.format_exception(exc)))
    run_log = last_run_log()
    if run_log is not None and append_internal_error(run_log, text):
        return run_log
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    name = f"crash-{stamp}-{os.getpid()}.log"
    for folder in (crash_dir(), Path(tempfile.gettempdir()) / "oracleproto"):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / name
            path.write_text(text, encoding="utf-8")
            return path
        except OSError:
            continue
    return None


def report_internal_error(exc: BaseException) -> int:
    """One line asking for a bug report, naming where the traceback went; exit 70."""
    where = write_crash_report(exc)
    place = f"the traceback is in {where}" if where is not None else "the traceback could not be saved"
    shown = redact_urls_in_text(str(exc))
    click.echo(
        f"internal error: {type(exc).__name__}: {shown} — this is a bug in oracleproto; please report it "
        f"with the command you ran ({place})",
        err=True,
    )
    if os.environ.get(TRACEBACK_ENV) == "1":
        click.echo(redact_urls_in_text("".join(traceback.format_exception(exc))), err=True, nl=False)
    return EXIT_INTERNAL


def show_click_error(exc: click.ClickException) -> None:
    """A click error in the one style of every message: ``error: …`` (after the usage line and the
    help hint of a usage error, as click prints them), never click's own ``Error: …``."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        exc.show()  # the command's help, not an error
        return
    ctx = exc.ctx if isinstance(exc, click.UsageError) else None
    if ctx is not None:
        hint = ""
        if ctx.command.get_help_option(ctx) is not None:
            option = max(ctx.command.get_help_option_names(ctx), key=len)
            hint = f"Try '{ctx.command_path} {option}' for help.\n"
        click.echo(f"{ctx.get_usage()}\n{hint}", err=True, color=ctx.color)
    click.echo(f"error: {exc.format_message()}", err=True)


def handle(exc: BaseException) -> int:
    """Print the message of ``exc`` and return the exit status (the top-level handler's body)."""
    if isinstance(exc, click.ClickException):
        show_click_error(exc)
        return exc.exit_code
    known = exit_for(exc)
    if known is None:
        return report_internal_error(exc)
    code, message = known
    click.echo(redact_urls_in_text(message), err=True)
    return code
