"""The options that choose an experiment's settings: ``--config``, ``--models``, ``--limit``, ``--samples``.

Precedence, highest first: these options > environment variables > the experiment config file
(``--config FILE``, else ``./oracleproto.toml``) > ``.env`` > defaults.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from oracleproto.dataset.demo import demo_db_path
from oracleproto.settings.model import Settings, load_settings
from oracleproto.settings.run_config import ConfigFile, config_values, find_config
from oracleproto.settings.values import split_list

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Experiment:
    """The settings of this invocation and the config file they came from (if any)."""

    settings: Settings
    config: ConfigFile | None


#: ``--profile``: the harness profile (``HARNESS_PROFILE``), on every command that builds requests.
PROFILE_HELP = (
    "Harness profile (JSON, docs/harness-profile.md): every byte the model, the detector and Tavily "
    "are sent; 'builtin' for oracleproto's own (overrides HARNESS_PROFILE)."
)


def profile_option(func: F) -> F:
    """Add ``--profile FILE`` (``HARNESS_PROFILE``) to a command."""
    return click.option("--profile", "profile_path", default=None, metavar="FILE", help=PROFILE_HELP)(func)


def with_profile(settings: Settings, profile: str | None) -> Settings:
    """``settings`` with ``--profile`` applied (the option beats ``HARNESS_PROFILE``)."""
    if profile is None:
        return settings
    if not profile.strip():
        raise click.UsageError("--profile is empty; give a profile file, or 'builtin'")
    run = settings.run.model_copy(update={"harness_profile": Path(profile)})
    return settings.model_copy(update={"run": run})


SAMPLES_HELP = (
    "Samples per question n (overrides SAMPLING_N; paper: 3); part of the run's identity: resume with "
    "the same n."
)


def env_file_option(func: F) -> F:
    """Add ``--env-file FILE`` (default ``.env``): read when it exists, below the environment."""
    return click.option(
        "--env-file",
        type=click.Path(path_type=Path, dir_okay=False),
        default=Path(".env"),
        show_default=True,
        help="Settings file read when it exists (the environment and the config file take precedence).",
    )(func)


def samples_option(func: F) -> F:
    """Add ``--samples N`` (``SAMPLING_N``): the same flag and meaning on ``run``, ``plan``, ``sim run``."""
    return click.option("--samples", type=click.IntRange(1, 1000), default=None, help=SAMPLES_HELP)(func)


def experiment_options(func: F) -> F:
    """Add ``--config``, ``--models``, ``--limit`` and ``--profile`` to a command."""
    func = profile_option(func)
    func = click.option(
        "--limit",
        type=click.IntRange(1),
        default=None,
        help="Only the first N questions (run order) some model admits (QUESTION_LIMIT); part of the "
        "run's identity: resume with the same N.",
    )(func)
    func = click.option(
        "--models",
        "models_option",
        default=None,
        metavar="SLUG,…",
        help="Models to run, comma-separated (overrides MODELS; each needs a MODEL_TRAINING_CUTOFFS entry).",
    )(func)
    func = click.option(
        "--config",
        "config_path",
        type=click.Path(path_type=Path, dir_okay=False),
        default=None,
        help="Experiment config file (TOML; default: ./oracleproto.toml when present).",
    )(func)
    return func


def load_experiment(
    env_file: Path | None,
    config_path: Path | None,
    models: str | None,
    limit: int | None,
    profile: str | None = None,
    *,
    samples: int | None = None,
) -> Experiment:
    """Settings from defaults < ``.env`` < config file < environment < the command's options."""
    config = find_config(config_path)
    settings = load_settings(
        env_file if env_file is not None and env_file.exists() else None, config_values(config)
    )
    if models is not None:
        chosen = [str(m) for m in split_list(models)]
        if not chosen:
            raise click.UsageError("--models is empty; give one or more slugs, comma-separated")
        settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"models": chosen})})
    run_updates = {k: v for k, v in (("question_limit", limit), ("sampling_n", samples)) if v is not None}
    if run_updates:
        settings = settings.model_copy(update={"run": settings.run.model_copy(update=run_updates)})
    settings = with_profile(settings, profile)
    settings.validate_static()
    return Experiment(settings, config)


def resolve_dataset(value: str | None, settings: Settings) -> Path:
    """``demo`` or empty → the bundled demo DB; otherwise the given path."""
    if value in (None, "", "demo"):
        if value is None and settings.run.source_db is not None:
            return settings.run.source_db
        return demo_db_path()
    return Path(value)
