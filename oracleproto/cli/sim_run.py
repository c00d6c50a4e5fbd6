"""``oracleproto sim run``: record a full run against the simulator, no API keys needed."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from typing import cast

import click

from oracleproto.cli.experiment import profile_option, resolve_dataset, with_profile
from oracleproto.cli.refresh import refresh_target, run_refresh, select_option
from oracleproto.cli.run import (
    allow_errors_option,
    check_run_id,
    execute_and_report,
    spend_cap,
    write_run_analysis,
)
from oracleproto.cli.run_label import label_options, run_label
from oracleproto.cli.sim_models import SimModels, models_options, sim_models
from oracleproto.primitives.clock import SystemClock
from oracleproto.profile import load_profile
from oracleproto.refresh.selector import parse_selector
from oracleproto.runner.allow_errors import AllowedErrors
from oracleproto.runner.execute import RunOptions
from oracleproto.settings.model import Settings
from oracleproto.sim.faults import FaultConfig, OddUsage
from oracleproto.sim.harness import (
    SIM_DETECTOR_KEY,
    SIM_LLM_KEY,
    SIM_MODELS,
    SimRunSpec,
    simulated_settings,
)
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store.label import RunLabel

_RATE = click.FloatRange(0.0, 1.0)


def simulated_profile(settings: Settings) -> Settings:
    """A simulated run seeds its requests, unless its profile's body has no ``seed`` (a harness
    that never sent one, such as the earlier implementation's): then it sends none."""
    path = settings.run.harness_profile
    if path is None:
        return settings
    profile = load_profile(path)
    if "seed" in profile.llm_request.key_order:
        return settings
    return settings.model_copy(update={"llm": settings.llm.model_copy(update={"send_seed": False})})


def with_limit(settings: Settings, limit: int | None) -> Settings:
    """``--limit N``: only the first N questions some model admits (``QUESTION_LIMIT``)."""
    if limit is None:
        return settings
    run = settings.run.model_copy(update={"question_limit": limit})
    return settings.model_copy(update={"run": run})


def _revisions(values: tuple[str, ...]) -> dict[str, int]:
    out: dict[str, int] = {}
    for value in values:
        model, _, rev = value.partition("=")
        if not model or not rev.isdigit():
            raise click.UsageError(f"--revise {value!r}: expected MODEL=REV, e.g. sim/hasty=1")
        out[model] = int(rev)
    return out


@click.command("run")
@click.option("--dataset", default="demo", show_default=True, help="Source DB path, or 'demo'.")
@models_options
@click.option(
    "--samples",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    help="Samples per question n (as on `run` and `plan`).",
)
@click.option(
    "--limit",
    type=click.IntRange(1),
    default=None,
    help="Only the first N questions (run order) some model admits (as on `run` and `plan`).",
)
@click.option(
    "--runs-root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("runs"),
    show_default=True,
    help="Folder the run directory goes in, and where --refresh looks a run up.",
)
@click.option(
    "--run-id",
    default=None,
    callback=check_run_id,
    help="Resume this run id (same arguments) or name a new run: UTC YYYYMMDD-HHMMSS plus 4 lowercase "
    "hex digits, e.g. 20260301-120000-0a1f.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Simulator seed.")
@click.option(
    "--latency-ms",
    type=click.FloatRange(0.0),
    default=0.0,
    show_default=True,
    help="Added latency of every simulated answer, in milliseconds.",
)
@click.option(
    "--fail-5xx", type=_RATE, default=0.0, show_default=True, help="Fraction of calls answered 500/502/503."
)
@click.option(
    "--fail-429", type=_RATE, default=0.0, show_default=True, help="Fraction of calls answered 429."
)
@click.option(
    "--fail-timeout", type=_RATE, default=0.0, show_default=True, help="Fraction of calls dropped (timeouts)."
)
@click.option("--revoke-llm-key", is_flag=True, help="Make the simulator reject the LLM key (401).")
@click.option(
    "--revoke-detector-key",
    is_flag=True,
    help="Give the leak detector a key of its own (LEAK_DETECTOR_API_KEY) and make the simulator reject it.",
)
@click.option(
    "--odd-usage",
    type=click.Choice(["huge", "nan", "infinity"]),
    default=None,
    help="Every chat answer reports impossible usage: 10^30 prompt tokens, or NaN / Infinity.",
)
@click.option(
    "--gzip-bomb-mib",
    type=click.IntRange(0, 1024),
    default=0,
    help="Send every answer gzip-compressed with this many MiB of padding (64: ~64 KB on the wire).",
)
@click.option(
    "--drip-s",
    type=click.FloatRange(0.0),
    default=0.0,
    help="Send every answer's body one byte every S seconds.",
)
@click.option(
    "--llm-credit",
    type=click.IntRange(0),
    default=None,
    help="Chat answers (main LLM and detector) the simulated account can pay for; later calls get "
    "OpenAI's 429 insufficient_quota. Rerun without it to 'top up'.",
)
@click.option(
    "--search-credit",
    type=click.IntRange(0),
    default=None,
    help="Searches the simulated Tavily plan allows; later calls get HTTP 432.",
)
@click.option("--no-detector", is_flag=True, help="Run without the leak detector.")
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0.0, min_open=True),
    default=None,
    metavar="USD",
    help="Stop resumably (exit 5) once this session's reported or priced spend reaches USD.",
)
@profile_option
@allow_errors_option
@label_options
@click.option("--no-report", is_flag=True, help="Skip the analysis pass at the end.")
@click.option("--no-progress", is_flag=True, help="Never draw the progress display.")
@click.option(
    "--refresh", default=None, metavar="RUN", help="Refresh RUN against the simulator (see run --refresh)."
)
@select_option
@click.option(
    "--revise",
    multiple=True,
    metavar="MODEL=REV",
    help="Serve MODEL (e.g. sim/hasty) at revision REV: new weights behind the same slug.",
)
def sim_run(
    *,
    dataset: str,
    models_option: str | None,
    personas: int | None,
    samples: int,
    limit: int | None,
    runs_root: Path,
    run_id: str | None,
    seed: int,
    latency_ms: float,
    fail_5xx: float,
    fail_429: float,
    fail_timeout: float,
    revoke_llm_key: bool,
    revoke_detector_key: bool,
    odd_usage: str | None,
    gzip_bomb_mib: int,
    drip_s: float,
    allowed: AllowedErrors,
    llm_credit: int | None,
    search_credit: int | None,
    no_detector: bool,
    max_cost: float | None,
    no_report: bool,
    no_progress: bool,
    refresh: str | None,
    select: tuple[str, ...],
    revise: tuple[str, ...],
    profile_path: str | None,
    name: str | None,
    tags: tuple[str, ...],
) -> None:
    """Start the simulator, record a run through the normal `run --record` path, print its directory."""
    faults = _fault_config(
        latency_ms=latency_ms,
        fail_5xx=fail_5xx,
        fail_429=fail_429,
        fail_timeout=fail_timeout,
        revoke_llm_key=revoke_llm_key,
        revoke_detector_key=revoke_detector_key,
        gzip_bomb_mib=gzip_bomb_mib,
        drip_s=drip_s,
    )
    if select and refresh is None:
        raise click.UsageError("--select needs --refresh RUN")
    chosen = sim_models(models_option, personas)
    label = run_label(name, tags, runs_root, run_id)
    config = SimConfig(
        seed=seed,
        chat=replace(faults, quota_after=llm_credit, odd_usage=cast(OddUsage | None, odd_usage)),
        search=replace(faults, quota_after=search_credit),
        revisions=_revisions(revise),
        replicas=not chosen.personas and chosen.count > len(SIM_MODELS),
    )
    _run_on_simulator(
        config,
        chosen,
        samples=samples,
        no_detector=no_detector,
        revoke_detector_key=revoke_detector_key,
        profile_path=profile_path,
        limit=limit,
        refresh=refresh,
        select=select,
        dataset=dataset,
        runs_root=runs_root,
        run_id=run_id,
        seed=seed,
        no_progress=no_progress,
        no_report=no_report,
        max_cost=max_cost,
        allowed=allowed,
        label=label,
    )


def _run_on_simulator(
    config: SimConfig,
    chosen: SimModels,
    *,
    samples: int,
    no_detector: bool,
    revoke_detector_key: bool,
    profile_path: str | None,
    limit: int | None,
    refresh: str | None,
    select: tuple[str, ...],
    dataset: str,
    runs_root: Path,
    run_id: str | None,
    seed: int,
    no_progress: bool,
    no_report: bool,
    max_cost: float | None,
    allowed: AllowedErrors,
    label: RunLabel,
) -> None:
    """Start the simulator serving the ``chosen`` models, then record a run, or refresh ``refresh``."""
    spec = SimRunSpec(
        models=chosen.count,
        personas=chosen.personas,
        samples=samples,
        runs_root=runs_root,
        detector=not no_detector,
        detector_key=SIM_DETECTOR_KEY if revoke_detector_key else None,
    )
    with Simulator(config) as sim:
        settings = with_limit(
            simulated_profile(with_profile(simulated_settings(sim, spec), profile_path)), limit
        )
        if refresh is not None:
            _refresh_run(
                refresh,
                select,
                settings,
                dataset=dataset,
                runs_root=runs_root,
                run_id=run_id,
                seed=seed,
                no_progress=no_progress,
                no_report=no_report,
            )
            return
        options = RunOptions(
            settings=settings,
            source_db=resolve_dataset(dataset, settings),
            runs_root=runs_root,
            mode="record",
            run_id=run_id,
            progress=not no_progress,
            after=None if no_report else write_run_analysis,
            spend_cap=None if max_cost is None else spend_cap(max_cost, settings, None),
        )
        execute_and_report(
            options, random.Random(seed), allowed=allowed, command="oracleproto sim run", label=label
        )


def _fault_config(
    *,
    latency_ms: float,
    fail_5xx: float,
    fail_429: float,
    fail_timeout: float,
    revoke_llm_key: bool,
    revoke_detector_key: bool,
    gzip_bomb_mib: int,
    drip_s: float,
) -> FaultConfig:
    """The faults both simulated services inject (``--latency-ms``, ``--fail-*``, ``--revoke-*`` …)."""
    if fail_5xx + fail_429 + fail_timeout > 1.0:
        raise click.UsageError("--fail-5xx + --fail-429 + --fail-timeout must not exceed 1")
    revoked = {SIM_LLM_KEY} if revoke_llm_key else set()
    if revoke_detector_key:
        revoked.add(SIM_DETECTOR_KEY)
    return FaultConfig(
        latency_ms=latency_ms,
        fail_5xx=fail_5xx,
        fail_429=fail_429,
        fail_timeout=fail_timeout,
        retry_after_s=0,
        revoked_keys=frozenset(revoked),
        gzip_bomb_mib=gzip_bomb_mib,
        drip_s=drip_s,
    )


def _refresh_run(
    refresh: str,
    select: tuple[str, ...],
    settings: Settings,
    *,
    dataset: str,
    runs_root: Path,
    run_id: str | None,
    seed: int,
    no_progress: bool,
    no_report: bool,
) -> None:
    """``--refresh RUN``: refresh that run against the running simulator."""
    from oracleproto.refresh.execute import RefreshOptions  # the refresh machinery: only for --refresh

    refresh_opts = RefreshOptions(
        old_run=refresh_target(refresh, runs_root),
        settings=settings,
        runs_root=runs_root,
        selector=parse_selector(select),
        dataset=None if dataset == "demo" else Path(dataset),
        run_id=run_id,
        progress=not no_progress,
        after=None if no_report else write_run_analysis,
    )
    run_refresh(refresh_opts, clock=SystemClock(), rand=random.Random(seed + 1))
