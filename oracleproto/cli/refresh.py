"""``oracleproto cassettes diff`` and the refresh half of ``run --refresh`` / ``sim run --refresh``."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from oracleproto.cli.exits import EXIT_FAILED, stopped_exit_status
from oracleproto.cli.runref import RUN_FORMS, resolve_run, runs_root_option
from oracleproto.cli.stop import StoppedBySignalError, report_stopped, run_stoppable
from oracleproto.errors import RunStoppedError, StoreError
from oracleproto.primitives.clock import Clock
from oracleproto.refresh.views import load_view, previous_generation, split_ref
from oracleproto.store import RunDir, new_run_id
from oracleproto.store.naming import RandomBits

if TYPE_CHECKING:
    from oracleproto.refresh.execute import RefreshOptions

# The refresh itself and its audit (refresh/execute.py, refresh/report.py) read runs through the
# analysis, numpy included: they are imported when a diff or a refresh runs, not by every `run` and
# `sim run` that imports this module for its options.

#: Exit status of ``cassettes diff --fail-on-drift`` when something drifted.
EXIT_DRIFT = EXIT_FAILED

select_option = click.option(
    "--select",
    "select",
    multiple=True,
    metavar="KEY=VALUE,...",
    help="With --refresh: re-record only matching calls (keys model, question, sample, channel; "
    "terms AND-ed, repeated options OR-ed); everything else replays from the old recording.",
)


def _emit(audit: dict[str, Any], fmt: str) -> None:
    from oracleproto.refresh.report import audit_json, render_markdown, summary_lines

    if fmt == "json":
        click.echo(audit_json(audit), nl=False)
    elif fmt == "md":
        click.echo(render_markdown(audit), nl=False)
    else:
        click.echo("\n".join(summary_lines(audit)))


def _side(ref: str, runs_root: Path | None) -> tuple[Path, int | None]:
    """``RUN`` or ``RUN@GEN``: the folder (any RUN form, or a cassette folder) and the generation."""
    path, generation = split_ref(ref)
    if not path.is_dir():
        # Not found: load_view says what is missing (and how to write a generation).
        with contextlib.suppress(StoreError):
            path = resolve_run(str(path), runs_root, cassettes=True).path
    return path, generation


@click.command("diff", epilog=f"OLD, NEW: {RUN_FORMS}; or a cassette folder; each optionally @GEN.")
@click.argument("old")
@click.argument("new")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "md", "json"]),
    default="text",
    show_default=True,
    help="text: the summary lines; md: the audit as Markdown; json: the whole audit.",
)
@click.option(
    "--bootstrap",
    "samples",
    type=click.IntRange(0),
    default=1000,
    show_default=True,
    help="Bootstrap resamples of the metric deltas' intervals (0: none).",
)
@click.option("--fail-on-drift", is_flag=True, help="Exit 1 when any entry is not unchanged.")
@runs_root_option
def diff_cmd(
    *, old: str, new: str, fmt: str, samples: int, fail_on_drift: bool, runs_root: Path | None
) -> None:
    """Classify every entry of OLD vs NEW (run dirs or cassette dirs, optionally PATH@GEN).

    Without @GEN each side is its latest generation; when both name the same directory, OLD
    is the generation before NEW's.
    """
    from oracleproto.refresh.report import build_audit

    old_path, old_gen = _side(old, runs_root)
    new_path, new_gen = _side(new, runs_root)
    after = load_view(new_path, new_gen)
    before = load_view(old_path, old_gen)
    if before.root.resolve() == after.root.resolve() and old_gen is None:
        before = previous_generation(after)
    audit = build_audit(before, after, bootstrap_samples=samples)
    _emit(audit, fmt)
    if fail_on_drift and audit["entries"]["changed"]:
        sys.exit(EXIT_DRIFT)


def run_refresh(options: RefreshOptions, *, clock: Clock, rand: RandomBits) -> None:
    """Run a refresh from a command, print the audit summary and the new run directory."""
    from oracleproto.refresh.execute import refresh_run, resume_arguments
    from oracleproto.refresh.report import summary_lines

    # Drawn here rather than in refresh_run so an interrupted refresh can be named in the message.
    run_id = options.run_id or new_run_id(clock, rand)
    try:
        result = run_stoppable(refresh_run(replace(options, run_id=run_id), clock=clock, rand=rand))
    except RunStoppedError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(stopped_exit_status(exc))
    except StoppedBySignalError as stop:
        old_id = RunDir.open(options.old_run).run_id
        again = resume_arguments(old_id, options.selector.describe(), run_id)
        report_stopped(stop, f"refresh {run_id} of {old_id}", again)
    s = result.summary
    click.echo(
        f"refresh of {result.old.run_id} → run {result.new.run_id}: {s.slots_run} slots re-executed",
        err=True,
    )
    click.echo("\n".join(summary_lines(result.audit)))
    for path in result.written:
        click.echo(f"wrote {path}")
    click.echo(str(result.new.root))


def refresh_target(value: str, runs_root: Path) -> Path:
    """``--refresh RUN``: any RUN form (``cli/runref.py``) but a bundle."""
    return resolve_run(value, runs_root).path
