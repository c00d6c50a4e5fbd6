"""``oracleproto report``: analyse a run directory and write the paper's tables."""

from __future__ import annotations

import math
from pathlib import Path

import click

from oracleproto.analysis import PriceTable, load_prices, parse_convention, read_run, write_analysis
from oracleproto.analysis.conventions import POINTS_F1
from oracleproto.analysis.leakage import AuditBound, audit_note, check_audit_run, read_audit
from oracleproto.analysis.leakage_composite import composite_leakage, composite_lines, write_composite_leakage
from oracleproto.analysis.names import load_display_names, unmatched_names
from oracleproto.analysis.pair_tables import render_pairs_markdown
from oracleproto.analysis.reader import RunData
from oracleproto.analysis.report import AnalysisResult, analyze
from oracleproto.analysis.tables import BOLD_RULES, TableStyle, render_markdown
from oracleproto.analysis.writer import FORMATS
from oracleproto.cli.report_points_f1 import report_points_f1_command
from oracleproto.cli.report_target import SCRATCH_NOTE, report_target, scratch_copy
from oracleproto.cli.runref import RUN_EPILOG, RunRef, run_argument, runs_root_option
from oracleproto.errors import AnalysisError
from oracleproto.primitives.oserrors import cannot_write
from oracleproto.store import RunDir
from oracleproto.store.naming import RUN_ID_RE

MAIN_TABLES = ("table3_overall", "table4_buckets", "table5_consistency")


def _usd_per_credit(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """A finite price >= 0, or a usage error saying so."""
    if value is not None and not (math.isfinite(value) and value >= 0):
        raise click.BadParameter(f"{value} is not a price: give a finite number >= 0, e.g. 0.008", ctx, param)
    return value


@click.command("report", epilog=RUN_EPILOG)
@run_argument("run_ref")
@runs_root_option
@click.option(
    "--convention",
    default="paper",
    show_default=True,
    help="Scoring convention: paper | reference-v4 | points-f1 (the upstream leaderboard's contract, "
    "written to --out or RUN/analysis/points-f1/). Without --out, a convention other than the run's "
    "own goes to RUN/analysis/CONVENTION/, beside its sealed analysis.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="all",
    show_default=True,
    help="Which outputs to write.",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Folder for the report (default: RUN/analysis, regenerated as `verify` expects it).",
)
@click.option(
    "--prices", type=click.Path(path_type=Path, dir_okay=False), default=None, help="Price table JSON/CSV."
)
@click.option(
    "--tavily-usd-per-credit",
    "usd_per_credit",
    type=float,
    default=None,
    callback=_usd_per_credit,
    help="USD per Tavily credit (1 per basic search, 2 per advanced); overrides the price file's.",
)
@click.option(
    "--names",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help='Display names, a JSON object {"real/slug": "Name"}; default: those recorded with the run.',
)
@click.option(
    "--decimals",
    type=click.IntRange(0, 8),
    default=None,
    help="Decimals of every number in Tables 3-5 (default: the paper's, 4 for scores, 2-3 for costs).",
)
@click.option(
    "--ci/--no-ci",
    default=False,
    show_default=True,
    help="Print the 95% bootstrap interval next to composite accuracy and pass@1, e.g. 0.854 [0.710, 0.970].",
)
@click.option(
    "--bold",
    type=click.Choice(BOLD_RULES),
    default="best",
    show_default=True,
    help="Bold every best value (best, the paper), only a best significantly better than the runner-up "
    "by the paired bootstrap (significant), or nothing (none).",
)
@click.option(
    "--audit",
    type=click.Path(path_type=Path, exists=True),
    default=None,
    help="A scored leakage audit of this run (`audit score` folder): also write each score's interval "
    "widened by the worst case the audit's FN/N upper bound allows, and flag orders it could flip "
    "(leakage_bounds.csv, leakage.json; paper/reference-v4 need --out).",
)
@click.option(
    "--bootstrap",
    "samples",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Bootstrap resamples of the intervals (without --out: the run's own, ANALYSIS_BOOTSTRAP_N).",
)
@click.option(
    "--seed",
    type=int,
    default=20260430,
    show_default=True,
    help="Bootstrap seed (without --out: the run's own, ANALYSIS_SEED).",
)
@click.pass_context
def report(
    ctx: click.Context,
    *,
    run_ref: RunRef,
    runs_root: Path | None,
    convention: str,
    fmt: str,
    out: Path | None,
    prices: Path | None,
    usd_per_credit: float | None,
    names: Path | None,
    decimals: int | None,
    ci: bool,
    bold: str,
    audit: Path | None,
    samples: int,
    seed: int,
) -> None:
    """Compute every metric of RUN and write tables, summary.json and plots."""
    run_dir = _report_run_dir(ctx, run_ref, out)
    conv = None if convention == POINTS_F1 else parse_convention(convention)
    table = _price_table(prices, usd_per_credit)
    display_names = load_display_names(names) if names is not None else None
    bound = read_audit(audit) if audit is not None else None
    if conv is None:  # the upstream board's contract: its own files, beside the paper's analysis
        report_points_f1_command(
            ctx,
            run_dir,
            out=out,
            prices=table,
            display_names=display_names,
            samples=samples,
            seed=seed,
            audit=bound,
        )
        return
    if bound is not None and out is None:
        # The run's analysis/ is sealed and regenerated from db/ alone; the audit is not part of it.
        raise AnalysisError(
            "--audit writes leakage bounds beside the tables, which the run's own analysis/ cannot hold "
            "(verify regenerates it from db/ alone): give --out DIR"
        )
    run = read_run(run_dir)
    if bound is not None:
        check_audit_run(bound, run.run_id)
    where = report_target(
        ctx, run_ref.text, run, convention=conv.value, out=out, prices=table, samples=samples, seed=seed
    )
    result = analyze(
        run,
        conv,
        prices=where.prices,
        bootstrap_samples=where.samples,
        seed=where.seed,
        display_names=display_names,
    )
    target = where.folder
    written = _write_tables(result, target, fmt, TableStyle(decimals=decimals, ci=ci, bold=bold))
    if bound is not None:
        assert out is not None
        written += _write_leakage(run, result, bound, out)
    _echo_notes(result, where.note, display_names)
    click.echo(f"wrote {len(written)} file(s) to {target}", err=True)


def _report_run_dir(ctx: click.Context, run_ref: RunRef, out: Path | None) -> Path:
    """The run directory to report on: a scratch copy of a read-only run without ``--out``."""
    run_dir = run_ref.path
    if run_ref.read_only and out is None:
        run_dir = scratch_copy(ctx, run_dir)
        ctx.call_on_close(lambda: click.echo(f"note: {SCRATCH_NOTE.format(text=run_ref.text)}", err=True))
    if RUN_ID_RE.fullmatch(run_dir.name):
        RunDir(run_dir, run_dir.name).require_idle("report on it")
    return run_dir


def _price_table(prices: Path | None, usd_per_credit: float | None) -> PriceTable | None:
    """``--prices`` with ``--tavily-usd-per-credit`` applied (None: neither was given)."""
    table = load_prices(prices) if prices is not None else None
    if usd_per_credit is not None:
        table = (table or PriceTable({})).with_credit_price(usd_per_credit)
    return table


def _write_tables(result: AnalysisResult, target: Path, fmt: str, style: TableStyle) -> list[Path]:
    """Write the analysis into ``target``, print Tables 3-5 (and the pairs); the files written."""
    try:
        written = write_analysis(result, target, fmt, style=style)
    except OSError as exc:  # the writer is atomic: nothing of the failed write is left behind
        raise AnalysisError(cannot_write(target, exc)) from None
    for name in MAIN_TABLES:
        click.echo(render_markdown(result, name, style))
    if result.comparisons is not None and result.comparisons["pairs"]:
        click.echo(render_pairs_markdown(result))
    return written


def _write_leakage(run: RunData, result: AnalysisResult, bound: AuditBound, out: Path) -> list[Path]:
    """``--audit``: write the leakage-widened bounds into ``out`` and print them; the files written."""
    leak = composite_leakage(run, result, bound)
    try:
        written = write_composite_leakage(result, leak, out)
    except OSError as exc:
        raise AnalysisError(cannot_write(out, exc)) from None
    click.echo(composite_lines(result, leak), nl=False)
    note = audit_note(bound, result.model_order)
    if note is not None:
        click.echo(f"note: {note}", err=True)
    return written


def _echo_notes(
    result: AnalysisResult, target_note: str | None, display_names: dict[str, str] | None
) -> None:
    """The notes on stderr: where the report went, the analysis's own, names matching no model."""
    if target_note is not None:
        click.echo(f"note: {target_note}", err=True)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    real_slugs = (entry["real_slug"] for entry in result.models.values())
    for slug in unmatched_names(real_slugs, display_names or {}):
        click.echo(f"note: --names names {slug!r}, which is no model of this run", err=True)
