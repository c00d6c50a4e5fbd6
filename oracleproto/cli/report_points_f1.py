"""``oracleproto report RUN --convention points-f1``: the upstream leaderboard's numbers.

A report of its own beside the paper's analysis: it writes ``--out DIR`` (default
``RUN/analysis/points-f1/``) and never rewrites the run's sealed analysis. The bootstrap options
default to the contract's 2,000 iterations and seed 20261001, not the paper analysis's defaults:
other values make the intervals incomparable with the board, so they are only used when given.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import click
from click.core import ParameterSource

from oracleproto.analysis.cost import PriceTable
from oracleproto.analysis.leakage import AuditBound, audit_note
from oracleproto.errors import AnalysisError
from oracleproto.primitives.oserrors import cannot_write

#: ``report`` options that shape the paper's tables only: named when given with points-f1.
PAPER_ONLY_OPTIONS = ("fmt", "decimals", "ci", "bold")


def _given(ctx: click.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source is not ParameterSource.DEFAULT


def report_points_f1_command(
    ctx: click.Context,
    run_dir: Path,
    *,
    out: Path | None,
    prices: PriceTable | None,
    display_names: Mapping[str, str] | None,
    samples: int,
    seed: int,
    audit: AuditBound | None = None,
) -> None:
    """Compute and write the points-f1 files, print the table and the notes."""
    # Imported here: the points-f1 modules are needed only by this convention.
    from oracleproto.analysis.points_f1 import ITERATIONS, SEED, report_points_f1
    from oracleproto.analysis.points_f1.leakage import leakage_markdown
    from oracleproto.analysis.points_f1.markdown import points_f1_markdown

    iterations = samples if _given(ctx, "samples") else ITERATIONS
    chosen_seed = seed if _given(ctx, "seed") else SEED
    try:
        result, target, written, leak = report_points_f1(
            run_dir,
            out,
            prices=prices,
            display_names=display_names,
            iterations=iterations,
            seed=chosen_seed,
            audit=audit,
        )
    except OSError as exc:  # written atomically: nothing of a failed write is left behind
        raise AnalysisError(cannot_write(out or run_dir / "analysis", exc)) from None
    click.echo(points_f1_markdown(result), nl=False)
    if leak is not None:
        click.echo(leakage_markdown(result, leak), nl=False)
        note = None if audit is None else audit_note(audit, result.model_order)
        if note is not None:
            click.echo(f"note: {note}", err=True)
    ignored = [f"--{'format' if n == 'fmt' else n}" for n in PAPER_ONLY_OPTIONS if _given(ctx, n)]
    if ignored:
        click.echo(
            f"note: {', '.join(ignored)} shape the paper's tables and do nothing under points-f1", err=True
        )
    if (iterations, chosen_seed) != (ITERATIONS, SEED):
        click.echo(
            f"note: bootstrap {iterations} × seed {chosen_seed} differs from the contract's "
            f"{ITERATIONS} × {SEED}: the intervals are not comparable with the board's",
            err=True,
        )
    click.echo(f"wrote {len(written)} file(s) to {target}", err=True)
