"""One recording against the simulator, refreshed under several scenarios (each run once per session)."""

from __future__ import annotations

import asyncio
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from oracleproto.dataset.demo import demo_db_path
from oracleproto.primitives.clock import SystemClock
from oracleproto.refresh import RefreshOptions, RefreshResult, parse_selector, refresh_run
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.settings.model import Settings
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator

ORIGINAL = "20260101-000000-0a00"
SPEC = SimRunSpec(models=2, samples=2)
#: The persona whose behaviour the "revised" scenarios change, and the question a partial refresh selects.
REVISED_MODEL = "sim/hasty"
SELECTED_QUESTION = "demo-03"


def _settings(sim: Simulator, runs_root: Path, tweak: Callable[[Settings], Settings] | None) -> Settings:
    settings = simulated_settings(
        sim, SimRunSpec(models=SPEC.models, samples=SPEC.samples, runs_root=runs_root)
    )
    # Small bootstrap: the CI machinery is exercised, the test stays quick.
    analysis = settings.analysis.model_copy(update={"bootstrap_samples": 200})
    settings = settings.model_copy(update={"analysis": analysis})
    return tweak(settings) if tweak is not None else settings


def record(runs_root: Path) -> Path:
    """Record the original run (no analysis pass: the audit reads the DBs directly)."""
    with Simulator(SimConfig(seed=0)) as sim:
        options = RunOptions(
            settings=_settings(sim, runs_root, None),
            source_db=demo_db_path(),
            runs_root=runs_root,
            mode="record",
            run_id=ORIGINAL,
            progress=False,
        )
        summary = asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))
    return summary.run.root


def refresh(
    old: Path,
    run_id: str,
    *,
    revisions: dict[str, int] | None = None,
    select: tuple[str, ...] = (),
    tweak: Callable[[Settings], Settings] | None = None,
) -> RefreshResult:
    """Refresh ``old`` against a fresh simulator (same seed) into a sibling run ``run_id``."""
    with Simulator(SimConfig(seed=0, revisions=revisions or {})) as sim:
        options = RefreshOptions(
            old_run=old,
            settings=_settings(sim, old.parent, tweak),
            runs_root=old.parent,
            selector=parse_selector(select),
            run_id=run_id,
            progress=False,
        )
        return asyncio.run(refresh_run(options, clock=SystemClock(), rand=random.Random(1)))


@dataclass(frozen=True)
class Scenario:
    """A refreshed copy of the original run."""

    old: Path
    result: RefreshResult

    @property
    def audit(self) -> dict[str, Any]:
        """The audit document."""
        return self.result.audit


@pytest.fixture(scope="session")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pristine original recording (tests must not write into it)."""
    return record(tmp_path_factory.mktemp("original"))


def _scenario(factory: pytest.TempPathFactory, original: Path, run_id: str, **kwargs: Any) -> Scenario:
    root = factory.mktemp(run_id)
    old = root / ORIGINAL
    shutil.copytree(original, old)
    return Scenario(old, refresh(old, run_id, **kwargs))


@pytest.fixture(scope="session")
def unchanged(tmp_path_factory: pytest.TempPathFactory, original: Path) -> Scenario:
    """Same personas, same settings."""
    return _scenario(tmp_path_factory, original, "20260101-000000-0a01")


@pytest.fixture(scope="session")
def revised(tmp_path_factory: pytest.TempPathFactory, original: Path) -> Scenario:
    """``sim/hasty`` served at revision 1 (new weights behind the same slug)."""
    return _scenario(tmp_path_factory, original, "20260101-000000-0a02", revisions={REVISED_MODEL: 1})


@pytest.fixture(scope="session")
def renderer(tmp_path_factory: pytest.TempPathFactory, original: Path) -> Scenario:
    """The harness changed: the reflection protocol is switched off, personas untouched."""

    def no_reflection(settings: Settings) -> Settings:
        react = settings.react.model_copy(update={"reflection_protocol": False})
        return settings.model_copy(update={"react": react})

    return _scenario(tmp_path_factory, original, "20260101-000000-0a03", tweak=no_reflection)


@pytest.fixture(scope="session")
def partial(tmp_path_factory: pytest.TempPathFactory, original: Path) -> Scenario:
    """``sim/hasty`` revised, but only its trajectories of one question are re-recorded."""
    return _scenario(
        tmp_path_factory,
        original,
        "20260101-000000-0a04",
        revisions={REVISED_MODEL: 1},
        select=(f"model={REVISED_MODEL},question={SELECTED_QUESTION}",),
    )
