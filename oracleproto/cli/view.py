"""``oracleproto view RUN|BUNDLE``: write (or serve on 127.0.0.1) the self-contained HTML viewer."""

from __future__ import annotations

from pathlib import Path

import click

from oracleproto.cli.runref import RUN_OR_BUNDLE_EPILOG, RunRef, run_argument, runs_root_option
from oracleproto.cli.view_hint import DEFAULT_NAME, default_out, viewer_hint
from oracleproto.view import build_document, opened_run, render_page, write_page
from oracleproto.view.serve import serve_forever
from oracleproto.view.source import verify_opened

__all__ = ["DEFAULT_NAME", "default_out", "view_command", "viewer_hint"]


def _stage(name: str) -> None:
    click.echo(f"· {name}", err=True)


def _shown_path(path: Path) -> str | None:
    """The run directory as the reader typed it (relative when under the cwd); None for a bundle."""
    if path.is_file():
        return None
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@click.command("view", epilog=RUN_OR_BUNDLE_EPILOG)
@run_argument(bundles=True)
@click.option(
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="HTML file to write (default: ./oracleproto-view-<run id>.html).",
)
@click.option(
    "--serve", "serve", is_flag=True, help="Serve the page on 127.0.0.1 (written too only with --out)."
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port for --serve (0: a free one, printed).",
)
@click.option(
    "--verify", "verify", is_flag=True, help="Run verify's checks (no re-execution) and show the verdict."
)
@runs_root_option
@click.option("--quiet", is_flag=True, help="Do not print the stages to stderr.")
def view_command(
    *,
    run: RunRef,
    out: Path | None,
    serve: bool,
    port: int,
    verify: bool,
    runs_root: Path | None,
    quiet: bool,
) -> None:
    """Look at RUN: one self-contained HTML file (written, or served on 127.0.0.1)."""
    progress = (lambda _: None) if quiet else _stage
    path = run.path
    with opened_run(path) as opened:
        report = None
        if verify:
            progress("verify (no re-execution)")
            report = verify_opened(opened, progress=progress)
        document = build_document(
            opened.root, report=report, source=run.text, run_path=_shown_path(path), progress=progress
        )
    page = render_page(document)
    if out is not None or not serve:
        written = write_page(page, out or default_out(opened.label if path.is_file() else opened.root.name))
        click.echo(f"wrote {written} ({written.stat().st_size / 1024:.0f} KiB): open it in a browser")
    if serve:
        serve_forever(
            page.encode("utf-8"), port, lambda url: click.echo(f"serving on {url} (Ctrl-C to stop)")
        )
