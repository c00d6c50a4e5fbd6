"""Small simulator runs for the audit tests, recorded once per session (a few seconds each)."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from oracleproto.dataset.demo import demo_db_path
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator

#: The questions of the fixture runs: half the demo, enough for every persona to search.
QUESTION_TYPES = ["yes_no", "binary_named"]
RUN_ID = "20260101-000000-a0d1"


def record_scheme(runs_root: Path, *, date_filter: str = "on", detector: bool = True) -> Path:
    """Record one sim/careful run (2 samples, 8 questions) under a leakage scheme; its run dir."""
    spec = SimRunSpec(models=1, samples=2, runs_root=runs_root, detector=detector)
    with Simulator(SimConfig(seed=0)) as sim:
        settings = simulated_settings(sim, spec)
        settings = settings.model_copy(
            update={
                "search": settings.search.model_copy(update={"date_filter": date_filter}),
                "run": settings.run.model_copy(update={"question_types": QUESTION_TYPES}),
            }
        )
        options = RunOptions(
            settings=settings,
            source_db=demo_db_path(),
            runs_root=runs_root,
            mode="record",
            run_id=RUN_ID,
            progress=False,
        )
        summary = asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))
    return summary.run.root


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recorded run behind the date filter and the detector (the paper's scheme)."""
    return record_scheme(tmp_path_factory.mktemp("audit-run"))


@pytest.fixture(scope="session")
def scheme_runs(sim_run: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three schemes of App. B.6 recorded on the same questions: none, date filter, both."""
    return {
        "none": record_scheme(tmp_path_factory.mktemp("none"), date_filter="off", detector=False),
        "date filter": record_scheme(tmp_path_factory.mktemp("date"), detector=False),
        "date filter + detector": sim_run,
    }
