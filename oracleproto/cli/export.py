"""``oracleproto export RUN``: one row per sample, as JSON Lines or CSV (stdout or ``--out FILE``)."""

from __future__ import annotations

from pathlib import Path

import click

from oracleproto.analysis.export import EXPORT_FORMATS, render_export, sample_rows
from oracleproto.analysis.names import load_display_names
from oracleproto.cli.runref import RUN_OR_BUNDLE_EPILOG, RunRef, run_argument, runs_root_option
from oracleproto.errors import AnalysisError
from oracleproto.primitives.fileio import atomic_write_text
from oracleproto.primitives.oserrors import cannot_write


@click.command("export", epilog=RUN_OR_BUNDLE_EPILOG)
@run_argument(bundles=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(EXPORT_FORMATS),
    default="jsonl",
    show_default=True,
    help="jsonl: one JSON object a line; csv: a header row, then one row per sample.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write to this file (atomically) instead of stdout.",
)
@click.option(
    "--names",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help='Display names for model_name, a JSON object {"real/slug": "Name"}; default: the recorded ones.',
)
@runs_root_option
def export_command(
    *, run: RunRef, fmt: str, out: Path | None, names: Path | None, runs_root: Path | None
) -> None:
    """One row per sample of RUN: model, question, sample, parsed letters, correct, exam score,
    tokens, cost, latency, error."""
    from oracleproto.view.source import opened_run  # a bundle is read from a checked temporary copy

    display_names = load_display_names(names) if names is not None else None
    with opened_run(run.path) as opened:
        rows = list(sample_rows(opened.root, display_names))
    text = render_export(rows, fmt)
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        atomic_write_text(out, text)
    except OSError as exc:
        raise AnalysisError(cannot_write(out, exc)) from None
    click.echo(f"wrote {len(rows)} sample row(s) to {out}", err=True)
