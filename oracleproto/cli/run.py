"""``oracleproto run`` and ``oracleproto replay``: the forecasting run, recorded or replayed."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from oracleproto.analysis import analyze_run
from oracleproto.analysis.postrun import write_run_analysis as analysis_pass
from oracleproto.analysis.tables import render_markdown
from oracleproto.analysis.writer import PlotDrawer, draw_here
from oracleproto.audit import RefreshOptions, parse_selector
from oracleproto.cli.audit import refresh_target, run_refresh, select_option
from oracleproto.cli.exits import EXIT_FAILED, EXIT_SAMPLE_ERRORS, stopped_exit_status
from oracleproto.cli.experiment import experiment_options, load_experiment
from oracleproto.cli.plan import calibrate_option, plan_prices, prices_option, show_plan
from oracleproto.cli.shard import plan_shard, shard_ledger, shard_options
from oracleproto.cli.stop import EXIT_STATUS, StoppedBySignalError, report_stopped, run_stoppable
from oracleproto.cli.store_option import from_store_option
from oracleproto.clock import SystemClock
from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import ConfigError, RunStoppedError, StoreError
from oracleproto.oserrors import describe_os_error
from oracleproto.providers.model_check import check_models
from oracleproto.redact import redact_urls_in_text
from oracleproto.runner.allow_errors import NO_ERRORS, AllowedErrors
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.replay import ReplayReport, replay_run
from oracleproto.runner.spend_cap import SpendCap
from oracleproto.runner.spend_plan import CREDITS
from oracleproto.runner.stopping import resume_arguments
from oracleproto.settings import CacheMode, Settings, load_settings
from oracleproto.store import RunDir, new_run_id
from oracleproto.store.naming import RandomBits, validate_run_id
from oracleproto.transport.stats import cassette_stats, savings_text

MAIN_TABLES = ("table3_overall", "table4_buckets", "table5_consistency")
#: Exit status when a replay did not reproduce the recording.
EXIT_MISMATCH = EXIT_FAILED


def write_run_analysis(run: RunDir, settings: Settings, draw_plots: PlotDrawer = draw_here) -> None:
    """The post-run pass: write ``analysis/`` under the run's own analysis settings."""
    analysis_pass(run.root, settings.analysis, draw_plots)


def execute_and_report(
    options: RunOptions,
    rand: RandomBits,
    *,
    allowed: AllowedErrors = NO_ERRORS,
    command: str = "oracleproto run --record",
) -> None:
    """Run ``options``; print the summary, the main tables and the run directory.

    Exits 3 on a rejected key or exhausted credit, 4 when a provider is unavailable, 2 for a model
    slug it does not serve, 6 when more samples ended in a call error than ``allowed``. ``command``
    is how the user resumes the run (shown with ``--run-id``).
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
        summary = run_stoppable(execute_run(replace(options, run_id=run_id), clock=clock, rand=rand))
    except RunStoppedError as exc:
        click.echo(f"error: {redact_urls_in_text(str(exc))}", err=True)
        sys.exit(stopped_exit_status(exc))
    except OSError as exc:
        where = options.runs_root / run_id
        resume = f"rerun with --run-id {run_id} to resume" if where.is_dir() else "rerun"
        raise StoreError(f"run {run_id}: {describe_os_error(exc, where)}; {resume}") from None
    except StoppedBySignalError as stop:
        report_stopped(stop, f"run {run_id}", resume_arguments(run_id))
    _report_summary(summary)
    if options.spend_cap is not None:
        click.echo(options.spend_cap.text(), err=True)
    if options.ledger is not None:
        click.echo(options.ledger.text(), err=True)
    if options.after is not None:
        _print_tables(summary.run)
    click.echo(str(summary.run.root))
    if options.mode != "replay" and not report_errored(summary, allowed, f"{command} --run-id {run_id}"):
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


def resolve_dataset(value: str | None, settings: Settings) -> Path:
    """``demo`` or empty → the bundled demo DB; otherwise the given path."""
    if value in (None, "", "demo"):
        if value is None and settings.run.source_db is not None:
            return settings.run.source_db
        return demo_db_path()
    return Path(value)


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


def _print_tables(run: RunDir) -> None:
    # The run's own analysis pass wrote these under its recorded analysis settings (prices, names,
    # convention); recomputing with this session's defaults could print other numbers.
    result = None
    for name in MAIN_TABLES:
        written = run.analysis_dir / f"{name}.md"
        if written.is_file():
            click.echo(written.read_text(encoding="utf-8").rstrip("\n") + "\n")
            continue
        if result is None:
            result = analyze_run(run.root, bootstrap_samples=0)
        click.echo(render_markdown(result, name))


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
@click.option("--runs-root", type=click.Path(path_type=Path, file_okay=False), default=None)
@click.option("--env-file", type=click.Path(path_type=Path, dir_okay=False), default=Path(".env"))
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
    profile_path: str | None,
    prices_path: Path | None,
    dry_run: bool,
    calibrate: str | None,
    max_cost: float | None,
    allowed: AllowedErrors,
) -> None:
    """Run the forecasting benchmark (admission, ReAct loop, store, analysis)."""
    experiment = load_experiment(env_file, config_path, models_option, limit, profile_path)
    settings = experiment.settings
    source_db = resolve_dataset(dataset, settings)
    chosen_mode = mode or settings.run.mode
    shard = plan_shard(settings, source_db, mode=chosen_mode, refresh=refresh is not None, dry_run=dry_run)
    if shard.done:
        return
    settings = shard.settings
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
    execute_and_report(options, secrets.SystemRandom(), allowed=allowed)


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


def _report_summary(summary: RunSummary) -> None:
    if summary.unchanged:
        click.echo(
            f"run {summary.run.run_id} is finished and nothing is pending (every slot done, no journal to "
            "fold, its analysis complete): nothing was written, its files and seal are as they were",
            err=True,
        )
        return
    errors = ", ".join(f"{k}={v}" for k, v in sorted(summary.errors.items())) or "none"
    click.echo(
        f"run {summary.run.run_id}: {summary.slots_total} slots, {summary.slots_done_before} done or "
        "excluded by the training cutoff before this session, "
        f"{summary.slots_run} run now; samples with call errors: {errors}",
        err=True,
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


@click.command("replay")
@click.argument("run")
@click.option("--runs-root", type=click.Path(path_type=Path, file_okay=False), default=None)
@click.option("--dataset", type=click.Path(path_type=Path, dir_okay=False), default=None)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where the replayed run directory goes (default: a new temporary folder).",
)
@click.option("--no-progress", is_flag=True)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object (nothing else).")
@click.option(
    "--processes",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes sharing the samples (default: 2 for a run large enough to be served from the "
    "index, when 2 CPUs are available; else 1). The replayed run is the same whatever the number.",
)
@from_store_option
def replay_command(
    *,
    run: str,
    runs_root: Path | None,
    dataset: Path | None,
    out: Path | None,
    no_progress: bool,
    as_json: bool,
    processes: int | None,
    from_store: str | None,
) -> None:
    """Replay RUN (a run directory, a run id, or 'demo') offline and compare it with the recording."""
    if processes is not None:
        from oracleproto.runner.replay_shards import usable_cpus

        if processes > (cpus := usable_cpus()):
            # Each process imports the whole pipeline (≈ 70 MB): more than the CPUs only costs memory.
            raise click.BadParameter(
                f"{processes} processes, but this process may run on {cpus} CPU(s); choose at most {cpus}",
                param_hint="'--processes'",
            )
    settings = load_settings(None)
    if from_store is not None:
        from oracleproto.cli.store import run_from_store

        pulled = run_from_store(from_store, run, quiet=no_progress)
        original, dataset = RunDir.open(pulled.run_dir), dataset or pulled.dataset
    elif run == "demo":
        from oracleproto.verify.demo import find_demo_run

        original = RunDir.open(find_demo_run())
    else:
        original = RunDir.resolve(run, runs_root or settings.run.runs_root)
        original.require_idle("replay it")
    # Without --out the replay is a throw-away: its folder is removed however the replay ends.
    out_root = out or Path(tempfile.mkdtemp(prefix="oracleproto-replay-"))
    try:
        report = run_stoppable(
            replay_run(
                original.root,
                out_root,
                clock=SystemClock(),
                rand=secrets.SystemRandom(),
                dataset=dataset,
                progress=not no_progress,
                after=write_run_analysis if _has_analysis(original) else None,
                cache_root=settings.run.cache_dir,
                processes=processes,
            )
        )
        if as_json:
            from oracleproto.cli.jsonout import emit_replay

            emit_replay(report, kept=out is not None, tables=report.ok and _has_analysis(original))
        else:
            _print_verdict(report, kept=out is not None)
            if report.ok and _has_analysis(original):
                _print_tables(RunDir.open(report.replayed))
            from oracleproto.cli.view_hint import viewer_hint

            click.echo(viewer_hint(run, original.run_id))
    except StoppedBySignalError as stop:
        # replay_run removed its run folder; the temporary folder goes below.
        click.echo(f"{stop.reason}: replay of {original.run_id} stopped; its output was removed", err=True)
        sys.exit(EXIT_STATUS[stop.reason])
    finally:
        if out is None:
            shutil.rmtree(out_root, ignore_errors=True)
    if not report.ok:
        sys.exit(EXIT_MISMATCH)


def _has_analysis(run: RunDir) -> bool:
    return run.analysis_dir.is_dir() and any(run.analysis_dir.iterdir())


def _print_verdict(report: ReplayReport, *, kept: bool) -> None:
    width = max(len(c.what) for c in report.checks)
    for check in report.checks:
        mark = "match" if check.ok else "DIFFERS"
        line = f"  {check.what.ljust(width)}  {mark}"
        if check.detail:
            line += f"  — {check.detail}"
        click.echo(line)
    matched = sum(c.ok for c in report.checks)
    verdict = "reproduced byte for byte" if report.ok else "did NOT reproduce"
    click.echo(f"replay of {report.original} {verdict} ({matched}/{len(report.checks)} checks match)")
    errors = report.summary.errors
    if errors:
        # A replay reproduces the recording, call errors included: they are not a replay failure.
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(errors.items()))
        click.echo(
            f"note: {sum(errors.values())} sample(s) of this recording ended in a call error ({kinds}), "
            "reproduced as recorded; to retry them, resume the recording live with --run-id "
            f"{report.summary.run.run_id}"
        )
    if kept:
        click.echo(f"replayed run: {report.replayed}")
    else:
        click.echo("replayed run: in a temporary folder, now removed (pass --out DIR to keep it)")
    click.echo(traffic_text(report.summary.traffic))
    # Counted while the replay's entries were in memory: parsing the cassettes again doubled its time.
    stats = report.summary.cassettes or cassette_stats(RunDir.open(report.replayed).cassettes_dir)
    click.echo(savings_text(stats))
