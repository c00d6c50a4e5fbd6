"""``oracleproto run`` and ``oracleproto replay``: the forecasting run, recorded or replayed."""

from __future__ import annotations

import asyncio
import secrets
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from oracleproto.cli.exits import EXIT_SAMPLE_ERRORS, stopped_exit_status
from oracleproto.cli.experiment import (
    env_file_option,
    experiment_options,
    load_experiment,
    resolve_dataset,
    samples_option,
)
from oracleproto.cli.plan import calibrate_option, plan_prices, prices_option, show_plan
from oracleproto.cli.refresh import refresh_target, run_refresh, select_option
from oracleproto.cli.run_label import label_options, run_label, write_run_label
from oracleproto.cli.run_output import print_tables, report_errored, report_summary, traffic_text
from oracleproto.cli.shard import plan_shard, shard_ledger, shard_options
from oracleproto.cli.stop import StoppedBySignalError, report_stopped, run_stoppable
from oracleproto.errors import ConfigError, RunStoppedError, StoreError
from oracleproto.primitives.clock import SystemClock
from oracleproto.primitives.oserrors import describe_os_error
from oracleproto.primitives.redact import redact_urls_in_text
from oracleproto.providers.model_check import check_models
from oracleproto.refresh.selector import parse_selector
from oracleproto.runner.allow_errors import NO_ERRORS, AllowedErrors
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.spend_cap import SpendCap
from oracleproto.runner.spend_plan import CREDITS
from oracleproto.runner.stopping import resume_arguments
from oracleproto.settings.model import CacheMode, Settings
from oracleproto.store import RunDir, new_run_id
from oracleproto.store.label import RunLabel
from oracleproto.store.naming import RandomBits, validate_run_id

if TYPE_CHECKING:
    from oracleproto.analysis.writer import PlotDrawer

__all__ = [
    "allow_errors_option",
    "check_run_id",
    "execute_and_report",
    "print_tables",
    "run_command",
    "spend_cap",
    "traffic_text",
    "write_run_analysis",
]


def write_run_analysis(run: RunDir, settings: Settings, draw_plots: PlotDrawer | None = None) -> None:
    """The post-run pass: write ``analysis/`` under the run's own analysis settings (``draw_plots``:
    who draws the plots; None: this process, as the pass runs)."""
    # The analysis (numpy, the metric families) loads here, when a pass runs: a recording without
    # one (--no-report) never imports it.
    from oracleproto.analysis.postrun import write_run_analysis as analysis_pass
    from oracleproto.analysis.writer import draw_here

    analysis_pass(run.root, settings.analysis, draw_here if draw_plots is None else draw_plots)


def execute_and_report(
    options: RunOptions,
    rand: RandomBits,
    *,
    allowed: AllowedErrors = NO_ERRORS,
    command: str = "oracleproto run --record",
    label: RunLabel | None = None,
) -> None:
    """Run ``options``; print the summary, the main tables and the run directory.

    Exits 3 on a rejected key or exhausted credit, 4 when a provider is unavailable, 2 for a model
    slug it does not serve, 6 when more samples ended in a call error than ``allowed``. ``command``
    is how the user resumes the run (shown with ``--run-id``); ``label`` its ``--name``/``--tag``.
    """
    clock = SystemClock()
    if options.run_id is not None:
        # Before the settings are checked: a run being recorded now is why this cannot go on.
        RunDir.at(options.runs_root, options.run_id).refuse_if_being_written()
    if options.mode == "record" and options.inner_transport is None:
        preflight_models(options.settings)
    # Drawn here rather than in the runner so an interrupted run can be named in the message.
    run_id = options.run_id or new_run_id(clock, rand)
    try:
        summary = _run_session(options, run_id, clock, rand)
    except BaseException:
        write_run_label(options.runs_root / run_id, label)  # a stopped run keeps its name too
        raise
    write_run_label(options.runs_root / run_id, label)
    _report(options, summary, allowed, f"{command} --run-id {run_id}")


def _run_session(options: RunOptions, run_id: str, clock: SystemClock, rand: RandomBits) -> RunSummary:
    """The session, its stops turned into their messages and exit statuses."""
    try:
        return run_stoppable(execute_run(replace(options, run_id=run_id), clock=clock, rand=rand))
    except RunStoppedError as exc:
        click.echo(f"error: {redact_urls_in_text(str(exc))}", err=True)
        sys.exit(stopped_exit_status(exc))
    except OSError as exc:
        where = options.runs_root / run_id
        resume = f"rerun with --run-id {run_id} to resume" if where.is_dir() else "rerun"
        raise StoreError(f"run {run_id}: {describe_os_error(exc, where)}; {resume}") from None
    except StoppedBySignalError as stop:
        report_stopped(stop, f"run {run_id}", resume_arguments(run_id))
        raise AssertionError("report_stopped exits") from None


def _report(options: RunOptions, summary: RunSummary, allowed: AllowedErrors, resume: str) -> None:
    """The summary, the spend, the tables and the run directory; exit 6 past ``--allow-errors``."""
    report_summary(summary)
    if options.spend_cap is not None:
        click.echo(options.spend_cap.text(), err=True)
    if options.ledger is not None:
        click.echo(options.ledger.text(), err=True)
    if options.after is not None:
        print_tables(summary.run)
    click.echo(str(summary.run.root))
    if options.mode != "replay" and not report_errored(summary, allowed, resume):
        sys.exit(EXIT_SAMPLE_ERRORS)


def preflight_models(settings: Settings) -> None:
    """Before the first paid call: every configured slug against its endpoint's model list.

    A slug no list holds is a ``ConfigError`` (exit 2) before anything is written; an endpoint that
    cannot be checked gets a note and the run goes on.
    """
    try:
        settings.validate_for_live()
    except ConfigError:
        return  # the run refuses these settings itself, in its own order (a live recorder first)
    check = asyncio.run(check_models(settings))
    for note in check.notes():
        click.echo(redact_urls_in_text(note), err=True)
    error = check.error()
    if error is not None:
        raise error


def allow_errors_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--allow-errors N|FRACTION`` (run, sim run): errored samples a recording may keep and exit 0."""

    def parse(ctx: click.Context, param: click.Parameter, value: str | None) -> AllowedErrors:
        if value is None:
            return NO_ERRORS
        try:
            return AllowedErrors.parse(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc), ctx=ctx, param=param) from None

    return click.option(
        "--allow-errors",
        "allowed",
        default=None,
        metavar="N|FRACTION",
        callback=parse,
        help="Samples that may end in a call error while the recording still exits 0: a number (3) or "
        "a fraction of the run's admitted samples (0.05, 5%). Default 0: any errored sample makes the "
        f"recording exit {EXIT_SAMPLE_ERRORS} (it is complete on disk; --run-id redoes those samples).",
    )(function)


def check_run_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--run-id`` callback: the format is checked before anything else runs or is created."""
    if value is None:
        return None
    try:
        return validate_run_id(value)
    except StoreError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


def _require_recording(run_id: str | None, runs_root: Path) -> None:
    """Replay mode re-executes a recorded run: refuse, before writing anything, when there is none."""
    hint = (
        "replay mode (the default, ORACLEPROTO_MODE=replay) re-executes a recorded run from its "
        "cassettes: pass --run-id of a recorded run under the runs root (or use `oracleproto replay RUN`), "
        "or record a new run with --record"
    )
    if run_id is None:
        raise click.UsageError(f"no run to replay; {hint}")
    if not (runs_root / run_id).is_dir():
        raise click.UsageError(f"no run {run_id} under {runs_root} to replay; {hint}")


@click.command("run")
@click.option("--record", "mode", flag_value="record", help="Call providers live and record every exchange.")
@click.option(
    "--replay",
    "mode",
    flag_value="replay",
    help="Re-execute from the run's cassettes, offline (default when no mode is given).",
)
@click.option("--dataset", default=None, help="Source DB path, or 'demo' (default: SOURCE_DB or the demo).")
@click.option(
    "--run-id",
    default=None,
    callback=check_run_id,
    help="Resume (or replay into) this run id: UTC start YYYYMMDD-HHMMSS plus 4 lowercase hex digits, "
    "e.g. 20260301-120000-0a1f (the run's folder name under the runs root); default: a new one.",
)
@click.option(
    "--runs-root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Folder the run directory goes in, and where --refresh/--calibrate look a run up (default: "
    "RUNS_ROOT from the environment, the config file or --env-file, else ./runs).",
)
@env_file_option
@click.option("--no-progress", is_flag=True, help="Never draw the progress display.")
@click.option("--no-report", is_flag=True, help="Skip the analysis pass at the end.")
@click.option(
    "--refresh",
    "refresh",
    default=None,
    metavar="RUN",
    help="Re-record RUN live into a new run directory and audit what changed (see --select).",
)
@select_option
@experiment_options
@samples_option
@label_options
@prices_option
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show the plan (admitted questions, calls, tokens, cost) and stop: no network, nothing written.",
)
@calibrate_option
@allow_errors_option
@shard_options
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0.0, min_open=True),
    default=None,
    metavar="USD",
    help="Stop resumably (exit 5) once this session's spend reaches USD: the provider's usage.cost, "
    "else the price table (--prices / PRICES_FILE). With LEDGER_URL: once every shard's spend together "
    "would pass USD, reserved before each call (docs/run-at-scale.md).",
)
def run_command(
    *,
    mode: CacheMode | None,
    refresh: str | None,
    select: tuple[str, ...],
    dataset: str | None,
    run_id: str | None,
    runs_root: Path | None,
    env_file: Path,
    no_progress: bool,
    no_report: bool,
    config_path: Path | None,
    models_option: str | None,
    limit: int | None,
    samples: int | None,
    name: str | None,
    tags: tuple[str, ...],
    profile_path: str | None,
    prices_path: Path | None,
    dry_run: bool,
    calibrate: str | None,
    max_cost: float | None,
    allowed: AllowedErrors,
) -> None:
    """Run the forecasting benchmark (admission, ReAct loop, store, analysis)."""
    experiment = load_experiment(env_file, config_path, models_option, limit, profile_path, samples=samples)
    settings = experiment.settings
    source_db = resolve_dataset(dataset, settings)
    chosen_mode = mode or settings.run.mode
    shard = plan_shard(settings, source_db, mode=chosen_mode, refresh=refresh is not None, dry_run=dry_run)
    if shard.done:
        return
    settings = shard.settings
    label = run_label(name, tags, runs_root or settings.run.runs_root, run_id)
    if calibrate is not None and not dry_run:
        raise click.UsageError("--calibrate RUN only shapes the plan: use it with --dry-run (or `plan`)")
    if dry_run:
        show_plan(
            settings,
            resolve_dataset(dataset, settings),
            prices_path,
            as_json=False,
            calibrate=calibrate,
            runs_root=runs_root,
        )
        return
    if refresh is not None or select:
        if refresh is None or mode is not None:
            raise click.UsageError("--select needs --refresh RUN, and --refresh excludes --record/--replay")
        root = runs_root or settings.run.runs_root
        from oracleproto.refresh.execute import RefreshOptions  # the refresh machinery: only for --refresh

        refresh_opts = RefreshOptions(
            old_run=refresh_target(refresh, root),
            settings=settings,
            runs_root=root,
            selector=parse_selector(select),
            dataset=None if dataset in (None, "", "demo") else Path(str(dataset)),
            run_id=run_id,
            progress=not no_progress,
            after=None if no_report else write_run_analysis,
        )
        run_refresh(refresh_opts, clock=SystemClock(), rand=secrets.SystemRandom())
        return
    chosen: CacheMode = mode or settings.run.mode
    if chosen == "replay":
        _require_recording(run_id, runs_root or settings.run.runs_root)
    options = RunOptions(
        settings=settings,
        source_db=resolve_dataset(dataset, settings),
        runs_root=runs_root or settings.run.runs_root,
        mode=chosen,
        run_id=run_id,
        progress=not no_progress,
        after=None if no_report else write_run_analysis,
        spend_cap=None if max_cost is None else spend_cap(max_cost, settings, prices_path),
        config_file=experiment.config.record() if experiment.config is not None else None,
        experiment=shard.info,
        ledger=shard_ledger(shard, mode=chosen, max_cost=max_cost, prices_path=prices_path),
    )
    execute_and_report(options, secrets.SystemRandom(), allowed=allowed, label=label)


def spend_cap(max_cost: float, settings: Settings, prices_path: Path | None) -> SpendCap:
    """The ``--max-cost`` tracker, pricing what providers do not report with the price table."""
    prices, _ = plan_prices(prices_path, settings)
    credit = prices.search_usd_per_credit if prices is not None else None
    credit = settings.analysis.tavily_usd_per_credit if credit is None else credit
    per_search = None if credit is None else credit * CREDITS.get(settings.search.search_depth, 1)
    if per_search is None and prices is not None:
        per_search = prices.search_usd_per_call
    return SpendCap(
        max_cost,
        prices=prices,
        detector_model=settings.detector.model if settings.detector.enabled else None,
        usd_per_search=per_search,
    )
