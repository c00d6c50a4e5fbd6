"""``sim run --models`` and ``--personas``: the same flag means the same thing everywhere.

``--models`` takes model slugs on every command (``run``, ``plan``, ``sim run``); the simulator's
count of personas is ``--personas N``. ``--models N`` (a bare number, the old spelling of the
count) is still accepted as a deprecated alias of ``--personas N``, with a note saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from oracleproto.sim.harness import MAX_SIM_MODELS, SIM_MODELS

F = TypeVar("F", bound=Callable[..., Any])

#: How many personas ``sim run`` runs when neither option is given.
DEFAULT_PERSONAS = 3
DEPRECATED_COUNT = (
    "note: `sim run --models N` (a count) is deprecated: it is `--personas N`; --models takes model "
    "slugs, as on `run` and `plan` (e.g. --models sim/careful,sim/hasty)"
)


@dataclass(frozen=True)
class SimModels:
    """The simulated models chosen: the first ``count`` ones, or these personas by name."""

    count: int = DEFAULT_PERSONAS
    personas: tuple[str, ...] = ()


def _count(value: str, option: str) -> int:
    number = int(value)
    if not 1 <= number <= MAX_SIM_MODELS:
        raise click.BadParameter(
            f"{number} is not in the range 1<=x<={MAX_SIM_MODELS} (simulated personas and their replicas)",
            param_hint=f"'{option}'",
        )
    return number


def _slugs(value: str) -> tuple[str, ...]:
    known = [slug for slug, _ in SIM_MODELS]
    chosen = [part.strip() for part in value.split(",") if part.strip()]
    if not chosen:
        raise click.BadParameter("give one or more slugs, comma-separated", param_hint="'--models'")
    unknown = [slug for slug in chosen if slug not in known]
    if unknown:
        raise click.BadParameter(
            f"{', '.join(unknown)}: not a simulated model; the simulator serves {', '.join(known)} "
            "(--personas N takes the first N, replicas included)",
            param_hint="'--models'",
        )
    if len(set(chosen)) != len(chosen):
        raise click.BadParameter("a slug is given twice", param_hint="'--models'")
    return tuple(slug.removeprefix("sim/") for slug in chosen)


def sim_models(models: str | None, personas: int | None) -> SimModels:
    """What ``--models`` and ``--personas`` choose (see the module docstring)."""
    if models is not None and models.strip().isdigit():
        if personas is not None:
            raise click.UsageError("--models N is the old spelling of --personas N: give only --personas")
        click.echo(DEPRECATED_COUNT, err=True)
        return SimModels(count=_count(models.strip(), "--models"))
    if models is not None:
        if personas is not None:
            raise click.UsageError(
                "--models names the models and --personas counts them: give one of the two"
            )
        return SimModels(personas=_slugs(models))
    return SimModels(count=DEFAULT_PERSONAS if personas is None else _count(str(personas), "--personas"))


def models_options(func: F) -> F:
    """Add ``--models SLUG,…`` and ``--personas N`` to ``sim run``."""
    func = click.option(
        "--personas",
        type=click.IntRange(1, MAX_SIM_MODELS),
        default=None,
        help=f"How many simulated models to run: the first N personas, then their replicas "
        f"(1-{MAX_SIM_MODELS}; default {DEFAULT_PERSONAS}).",
    )(func)
    return click.option(
        "--models",
        "models_option",
        default=None,
        metavar="SLUG,…",
        help="Simulated models to run, by slug, comma-separated (e.g. sim/careful,sim/hasty), as --models "
        "takes slugs on `run` and `plan`. A bare number is the deprecated spelling of --personas N.",
    )(func)
