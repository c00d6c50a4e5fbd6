"""What ``run``, ``sim run`` and ``replay`` print about a run: its summary, errored samples, tables.

Apart from ``cli/run.py`` so that the recording command stays a thin layer over the runner.
"""

from __future__ import annotations

import click

from oracleproto.cli.exits import EXIT_SAMPLE_ERRORS
from oracleproto.runner.allow_errors import AllowedErrors
from oracleproto.runner.options import RunSummary
from oracleproto.store import RunDir
from oracleproto.store.label import read_label

MAIN_TABLES = ("table3_overall", "table4_buckets", "table5_consistency")


def run_name(run: RunDir) -> str:
    """``run <id>``, with its name and tags (``run --name/--tag``) when it has them."""
    label = read_label(run.root)
    return f"run {run.run_id}" + (f" ({label.text()})" if not label.empty else "")


def slots_text(summary: RunSummary) -> str:
    """``16 slots, 12 excluded by a model's training cutoff, 2 done before this session, 2 run now``.

    Slots excluded by admission are counted apart from the work of earlier sessions: a brand-new
    run has none of the latter, and says so by not naming them.
    """
    excluded = max(summary.slots_total - summary.samples_admitted, 0)
    earlier = max(summary.slots_done_before - excluded, 0)
    parts = [f"{summary.slots_total} slot{'' if summary.slots_total == 1 else 's'}"]
    if excluded:
        parts.append(f"{excluded} excluded by a model's training cutoff")
    if earlier:
        parts.append(f"{earlier} done before this session")
    parts.append(f"{summary.slots_run} run now")
    return ", ".join(parts)


def report_summary(summary: RunSummary) -> None:
    """The end-of-session summary on stderr: slots, call errors, retries and failures, traffic."""
    if summary.unchanged:
        click.echo(
            f"{run_name(summary.run)} is finished and nothing is pending (every slot done, no journal to "
            "fold, its analysis complete): nothing was written, its files and seal are as they were",
            err=True,
        )
        return
    errors = ", ".join(f"{k}={v}" for k, v in sorted(summary.errors.items())) or "none"
    click.echo(
        f"{run_name(summary.run)}: {slots_text(summary)}; samples with call errors: {errors}", err=True
    )
    if summary.failures.has_failures():
        click.echo("retries and failures this session (per model):", err=True)
        for line in summary.failures.lines():
            click.echo(line, err=True)
    else:
        click.echo("retries and failures this session: none", err=True)
    if summary.traffic:
        click.echo(traffic_text(summary.traffic), err=True)


def traffic_text(traffic: dict[str, dict[str, int]]) -> str:
    """One line: this session's requests per channel, and how many came from cassettes vs live."""
    total = sum(t["requests"] for t in traffic.values())
    cached = sum(t["from_cassette"] for t in traffic.values())
    per = ", ".join(f"{name} {t['requests']}" for name, t in sorted(traffic.items())) or "none"
    return f"requests this session: {total} ({per}); {cached} served from cassettes, {total - cached} live"


def report_errored(summary: RunSummary, allowed: AllowedErrors, resume: str) -> bool:
    """Name the samples that ended in a call error and how to retry them; False when more than
    ``allowed`` did (the caller exits ``EXIT_SAMPLE_ERRORS``)."""
    errored = len(summary.failures.errored_samples)
    if not errored:
        return True
    click.echo(f"samples that ended in a call error ({errored}, by model and error):", err=True)
    for line in summary.failures.errored_lines():
        click.echo(line, err=True)
    click.echo(
        f"to retry them: `{resume}` (with the options this run was started with); the resume redoes "
        "exactly these samples and keeps every other (a failed call is sent again; an HTTP 200 reply "
        "that was unusable, `unknown`, is served from the cassette again)",
        err=True,
    )
    admitted = summary.samples_admitted
    if not allowed.exceeded(errored, admitted):
        click.echo(
            f"{errored} errored sample(s) of {admitted} admitted are within --allow-errors {allowed.text} "
            f"(at most {allowed.limit(admitted)}): the run counts as finished",
            err=True,
        )
        return True
    click.echo(
        f"error: run {summary.run.run_id}: {errored} of {admitted} admitted samples ended in a call error, "
        f"more than --allow-errors {allowed.text} allows (at most {allowed.limit(admitted)}); the run is "
        f"complete on disk; retry them as above, or pass --allow-errors N|FRACTION to accept a partial "
        f"run (exit {EXIT_SAMPLE_ERRORS})",
        err=True,
    )
    return False


def print_tables(run: RunDir) -> None:
    """Tables 3–5 of the run: as its analysis pass wrote them, else recomputed (no bootstrap)."""
    # The run's own analysis pass wrote these under its recorded analysis settings (prices, names,
    # convention); recomputing with this session's defaults could print other numbers.
    result = None
    for name in MAIN_TABLES:
        written = run.analysis_dir / f"{name}.md"
        if written.is_file():
            click.echo(written.read_text(encoding="utf-8").rstrip("\n") + "\n")
            continue
        if result is None:
            # The analysis (numpy, the metric families) loads only when a table must be recomputed.
            from oracleproto.analysis import analyze_run
            from oracleproto.analysis.tables import render_markdown

            result = analyze_run(run.root, bootstrap_samples=0)
        click.echo(render_markdown(result, name))
