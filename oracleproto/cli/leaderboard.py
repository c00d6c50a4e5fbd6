"""``oracleproto leaderboard RUN… --out DIR``: one offline HTML page and a CSV of the runs' models."""

from __future__ import annotations

from pathlib import Path

import click

from oracleproto.analysis.leakage import read_audit
from oracleproto.analysis.names import load_display_names, unmatched_names
from oracleproto.analysis.prices import PriceTable, load_prices
from oracleproto.cli.verify import resolve_run_ref


def _stage(name: str) -> None:
    click.echo(f"· {name}", err=True)


@click.command("leaderboard")
@click.argument("runs", nargs=-1, required=True)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="Folder for leaderboard.html, leaderboard.csv and each run's viewer page: new, empty, or an "
    "earlier board's (replaced whole, all files at once).",
)
@click.option(
    "--audit",
    "audits",
    type=click.Path(path_type=Path, exists=True),
    multiple=True,
    help="A scored leakage audit (`audit score` folder) of one of the runs (repeatable, one per run): "
    "show each of its models' interval widened by the audit's FN/N upper bound.",
)
@click.option(
    "--prices", type=click.Path(path_type=Path, dir_okay=False), default=None, help="Price table JSON/CSV."
)
@click.option(
    "--names",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help='Display names, a JSON object {"real/slug": "Name"}; default: those recorded with the runs.',
)
@click.option(
    "--views/--no-views",
    default=True,
    show_default=True,
    help="Write each run's viewer page beside the board (its rows link to the model's samples there).",
)
@click.option(
    "--runs-root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where run ids are looked up (default RUNS_ROOT).",
)
@click.option("--quiet", is_flag=True, help="Do not print the stages to stderr.")
def leaderboard_command(
    *,
    runs: tuple[str, ...],
    out: Path,
    audits: tuple[Path, ...],
    prices: Path | None,
    names: Path | None,
    views: bool,
    runs_root: Path | None,
    quiet: bool,
) -> None:
    """An offline HTML leaderboard and CSV of RUN… (run dirs, run ids, bundles, 'demo'), points-f1."""
    from oracleproto.leaderboard import build_leaderboard  # the page builder only when it runs

    refs = [(ref, resolve_run_ref(ref, runs_root)) for ref in runs]
    table: PriceTable | None = load_prices(prices) if prices is not None else None
    display_names = load_display_names(names) if names is not None else None
    bounds = [read_audit(path) for path in audits]
    built = build_leaderboard(
        refs,
        out,
        prices=table,
        display_names=display_names,
        audits=bounds,
        views=views,
        progress=(lambda _: None) if quiet else _stage,
    )
    for note in built.document["notes"]:
        click.echo(f"note: {note}", err=True)
    for slug in unmatched_names((m["real_slug"] for m in built.document["models"]), display_names or {}):
        click.echo(f"note: --names names {slug!r}, which is no model of these runs", err=True)
    page = built.written[0]
    click.echo(
        f"wrote {page} ({page.stat().st_size / 1024:.0f} KiB) and {len(built.written) - 1} more file(s)"
    )
