"""``run --shard I/N | --shard-models SLUG,…``, ``--experiment ID``, ``--print-experiment-id`` and the
shared ledger (``LEDGER_URL``): one shard of an experiment, recorded into its own run directory.

The options store what they were given in the click context (``expose_value=False``), so ``run``
takes them with one call, :func:`plan_shard`. The experiment id is computed from the whole
experiment's settings (every model), before the shard narrows them to its own models.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from oracleproto.cli.plan import plan_prices
from oracleproto.errors import ConfigError
from oracleproto.ledger import CallPricing, LedgerGate, ledger_config, open_ledger_gate
from oracleproto.runner.experiment_id import PARTS, ExperimentId, experiment_id, refuse_mismatch
from oracleproto.runner.identity import resolve_identity
from oracleproto.runner.run_texts import load_run_texts, with_protocol_switches
from oracleproto.runner.sharding import ShardSpec, assign, chosen_subset
from oracleproto.runner.spend_plan import CREDITS
from oracleproto.settings.model import CacheMode, Settings
from oracleproto.settings.values import split_list
from oracleproto.store.manifest import ExperimentInfo

F = TypeVar("F", bound=Callable[..., Any])
_META = "oracleproto.shard"


@dataclass(frozen=True)
class ShardChoice:
    """What the shard options were given."""

    shard: ShardSpec | None = None
    models: tuple[str, ...] | None = None
    expected: ExperimentId | None = None
    print_id: bool = False
    #: ``ORACLEPROTO_EXPERIMENT`` rather than ``--experiment``: ignored by commands that do not record.
    expected_from_env: bool = False

    @property
    def sharded(self) -> bool:
        """Whether this run is a shard (and records its experiment in its manifest)."""
        return self.shard is not None or self.models is not None or self.expected is not None


@dataclass(frozen=True)
class ShardPlan:
    """The shard's settings (its models only), its manifest entry, the experiment id."""

    settings: Settings
    info: ExperimentInfo | None = None
    experiment: ExperimentId | None = None
    #: The command is done: the id was printed, or this shard has no model to record.
    done: bool = False


def _store(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    choice: ShardChoice = ctx.meta.get(_META, ShardChoice())
    try:
        if param.name == "shard" and value is not None:
            choice = replace(choice, shard=ShardSpec.parse(value))
        elif param.name == "shard_models" and value is not None:
            models = tuple(str(m) for m in split_list(value))
            if not models:
                raise ValueError("is empty; give one or more of the experiment's models, comma-separated")
            choice = replace(choice, models=models)
        elif param.name == "experiment" and value:
            from_env = ctx.get_parameter_source("experiment") is ParameterSource.ENVIRONMENT
            choice = replace(choice, expected=ExperimentId.parse(value), expected_from_env=from_env)
        elif param.name == "print_experiment_id" and value:
            choice = replace(choice, print_id=True)
    except (ValueError, ConfigError) as exc:
        shown = str(exc).removeprefix(f"--experiment {value!r} ")
        raise click.BadParameter(shown, ctx=ctx, param=param) from None
    ctx.meta[_META] = choice


def shard_options(func: F) -> F:
    """Add ``--shard``, ``--shard-models``, ``--experiment`` and ``--print-experiment-id``."""
    options = [
        click.option(
            "--print-experiment-id",
            is_flag=True,
            expose_value=False,
            callback=_store,
            help="Print the experiment id these options make (every shard must print the same) and stop: "
            "no network, nothing written.",
        ),
        click.option(
            "--experiment",
            metavar="ID",
            envvar="ORACLEPROTO_EXPERIMENT",
            expose_value=False,
            callback=_store,
            help="Refuse to start unless this shard's experiment id is ID, naming the part that differs "
            "(dataset, settings, protocols, profile); ORACLEPROTO_EXPERIMENT.",
        ),
        click.option(
            "--shard-models",
            metavar="SLUG,…",
            expose_value=False,
            callback=_store,
            help="Record only these of the experiment's models as one shard (instead of --shard I/N).",
        ),
        click.option(
            "--shard",
            metavar="I/N",
            expose_value=False,
            callback=_store,
            help="Record shard I of N (I from 0) of the experiment's models, sorted by slug: shard I takes "
            "positions I, I+N, …; auto/N reads I from ORACLEPROTO_SHARD_INDEX or JOB_COMPLETION_INDEX.",
        ),
    ]
    for option in options:
        func = option(func)
    return func


def _choice() -> ShardChoice:
    ctx = click.get_current_context(silent=True)
    choice = ctx.meta.get(_META) if ctx is not None else None
    return choice if isinstance(choice, ShardChoice) else ShardChoice()


def _with_models(settings: Settings, models: list[str]) -> Settings:
    return settings.model_copy(update={"llm": settings.llm.model_copy(update={"models": models})})


def _check_mode(choice: ShardChoice, mode: CacheMode, refresh: bool, dry_run: bool) -> None:
    if choice.sharded and (refresh or (mode != "record" and not dry_run)):
        raise click.UsageError(
            "--shard, --shard-models and --experiment record one shard of an experiment: use them with "
            "--record or --dry-run (a recorded shard is replayed like any run: `oracleproto replay RUN`)"
        )
    if choice.shard is not None and choice.models is not None:
        raise click.UsageError("--shard I/N and --shard-models name a shard two ways: give one of them")


def plan_shard(
    settings: Settings,
    source_db: Path,
    *,
    mode: CacheMode,
    refresh: bool = False,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
) -> ShardPlan:
    """This invocation's shard: its settings, manifest entry and experiment id (or ``done``);
    ``dry_run``: only planned (``run --dry-run``), in any mode."""
    env = os.environ if env is None else env
    choice = _choice()
    if choice.expected_from_env and (refresh or (mode != "record" and not dry_run)):
        choice = replace(choice, expected=None)  # a shard's environment, in a shell that replays
    wants_ledger = mode == "record" and not refresh and ledger_config(env) is not None
    if not (choice.sharded or choice.print_id or wants_ledger):
        return ShardPlan(settings)
    if not choice.print_id:
        _check_mode(choice, mode, refresh, dry_run)
    # As the run resolves it (runner/execute.py): a PROTOCOLS_FILE's blocks switch the protocols.
    texts = load_run_texts(settings)
    whole = resolve_identity(with_protocol_switches(settings, texts, recorded=False), source_db, texts=texts)
    exp_id = experiment_id(whole, settings)
    models = list(settings.llm.models)
    spec = choice.shard.resolved(env) if choice.shard is not None else None
    if spec is not None and spec.index is not None:
        mine = assign(models, spec.index, spec.count)
    else:
        mine = chosen_subset(models, choice.models) if choice.models is not None else models
    if choice.print_id:
        part = spec.text if spec is not None else ("--shard-models" if choice.models is not None else None)
        _print_id(exp_id, models, mine, part)
        return ShardPlan(settings, experiment=exp_id, done=True)
    if choice.expected is not None:
        refuse_mismatch(choice.expected, exp_id)
    if not choice.sharded:
        return ShardPlan(settings, experiment=exp_id)
    if not mine:
        assert spec is not None  # --shard-models is never empty
        click.echo(
            f"shard {spec.text} of experiment {exp_id} has no model configuration: the experiment has "
            f"{len(models)} ({', '.join(sorted(models))}), and shard I takes the sorted positions I, I+N, …; "
            "nothing to record",
            err=True,
        )
        return ShardPlan(settings, experiment=exp_id, done=True)
    shard_settings = _with_models(settings, mine)
    if settings.run.question_limit is not None:
        _same_questions(shard_settings, source_db, whole.filters["question_ids"])
    info = ExperimentInfo(
        id=exp_id.text,
        shard_index=None if spec is None else spec.index,
        shard_count=None if spec is None else spec.count,
        models=sorted(models),
    )
    return ShardPlan(shard_settings, info=info, experiment=exp_id)


def _same_questions(shard_settings: Settings, source_db: Path, expected: list[str]) -> None:
    """A shard asks the experiment's questions: ``--limit N`` counts questions some model admits, so
    with other models it could pick others; such a shard is refused rather than made incomparable."""
    mine = resolve_identity(shard_settings, source_db).filters["question_ids"]
    if mine != expected:
        raise ConfigError(
            f"this shard's models would be asked {len(mine)} question(s) other than the experiment's "
            f"{len(expected)}: QUESTION_LIMIT (--limit) takes the first questions that one of the run's "
            "models admits, and this shard's models admit other ones. Nothing was written. Shard the "
            "experiment without --limit (select questions with QUESTION_TYPES / CHOICE_TYPES or the "
            "dataset), or group models with the same training cutoffs with --shard-models"
        )


def _print_id(exp_id: ExperimentId, models: list[str], mine: list[str], shard: str | None) -> None:
    """The id on stdout (for ``$(…)``); its parts, the models and this shard's on stderr."""
    click.echo(exp_id.text)
    for part, help_text in PARTS.items():
        click.echo(f"  {part:<9} {exp_id.digests[part]}  {help_text}", err=True)
    click.echo(f"  models    {len(models)}: {', '.join(sorted(models))}", err=True)
    if shard is not None:
        shown = ", ".join(mine) if mine else "none (nothing to record)"
        click.echo(f"  shard {shard}: {shown}", err=True)


def shard_ledger(
    plan: ShardPlan,
    *,
    mode: CacheMode,
    max_cost: float | None,
    prices_path: Path | None,
    env: Mapping[str, str] | None = None,
) -> LedgerGate | None:
    """The gate on ``LEDGER_URL`` for a recording (None without one, or when not recording)."""
    config = ledger_config(os.environ if env is None else env)
    if config is None or mode != "record" or plan.experiment is None:
        return None
    settings = plan.settings
    prices, _ = plan_prices(prices_path, settings)
    credit = prices.search_usd_per_credit if prices is not None else None
    credit = settings.analysis.tavily_usd_per_credit if credit is None else credit
    per_search = None if credit is None else credit * CREDITS.get(settings.search.search_depth, 1)
    if per_search is None and prices is not None:
        per_search = prices.search_usd_per_call
    pricing = CallPricing(
        prices,
        settings.detector.model if settings.detector.enabled else None,
        per_search,
        unpriced_usd=config.reserve_usd,
        default_max_tokens=settings.llm.max_tokens,
    )
    return open_ledger_gate(
        config, settings, budget=plan.experiment.text, max_cost_usd=max_cost, pricing=pricing
    )
