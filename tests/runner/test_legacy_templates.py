"""A dataset with the earlier implementation's single multiple-choice template key, recorded.

Prompts are rendered from the key's two stand-ins (``dataset/loader.py``), but run-layout.md stores
and hashes the templates as the dataset writes them: the DBs and ``prompt_templates_hash`` are
those of the earlier implementation's runs over the same dataset. A run recorded before this stored
the stand-ins; its replay and its resume keep that form.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from oracleproto.dataset.loader import template_forms
from oracleproto.primitives.clock import FakeClock, SystemClock
from oracleproto.prompts import prompt_templates_hash
from oracleproto.runner import identity as identity_module
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.replay import replay_run
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store import Manifest
from oracleproto.verify.target import verify_path
from tests.conftest import SHARED_EARLIER

DATASET = SHARED_EARLIER / "forecast_eval_set.subset.db"
RUN_ID = "20260201-000000-1e9a"

pytestmark = pytest.mark.slow


def _record(sim: Simulator, runs_root: Path) -> RunSummary:
    spec = SimRunSpec(models=1, samples=1, runs_root=runs_root, detector=False, training_cutoff="2025-06")
    settings = simulated_settings(sim, spec)
    settings = settings.model_copy(update={"run": settings.run.model_copy(update={"question_limit": 3})})
    options = RunOptions(
        settings=settings, source_db=DATASET, runs_root=runs_root, run_id=RUN_ID, progress=False
    )
    return asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))


def _stored(run: Path) -> list[dict[str, str]]:
    tables = []
    for db in sorted((run / "db").glob("*.db")):
        with closing(sqlite3.connect(db)) as conn:
            tables.append(dict(conn.execute("SELECT key, value FROM prompt_templates ORDER BY key")))
    return tables


@pytest.fixture(scope="module")
def forms() -> tuple[Any, Any]:
    if not DATASET.exists():
        pytest.fail(f"{DATASET} is missing: tests need ../shared beside the repository")
    rendered, written = template_forms(DATASET)
    assert prompt_templates_hash(rendered) != prompt_templates_hash(written)  # a legacy dataset
    return rendered, written


def test_a_run_stores_and_hashes_the_templates_as_the_dataset_writes_them(
    forms: tuple[Any, Any], tmp_path: Path
) -> None:
    _, written = forms
    with Simulator(SimConfig(seed=0)) as sim:
        summary = _record(sim, tmp_path)
    assert summary.slots_run == 3 and not summary.errors
    run = tmp_path / RUN_ID
    assert Manifest.load(run / "manifest.json").hashes.prompt_templates == prompt_templates_hash(written)
    assert _stored(run) == [written.as_dict()]
    assert "multiple_choice_output_format" in written.as_dict()
    report = verify_path(run, dataset=DATASET)
    assert report.ok, [c for c in report.checks if not c.ok]


def test_a_run_that_stored_the_stand_ins_replays_and_resumes_in_that_form(
    forms: tuple[Any, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rendered, _ = forms
    with Simulator(SimConfig(seed=0)) as sim:
        # As oracleproto recorded before storing the templates as written: the stand-ins, hashed.
        with monkeypatch.context() as patched:
            patched.setattr(identity_module, "template_forms", lambda db: (rendered, rendered))
            _record(sim, tmp_path)
        run = tmp_path / RUN_ID
        legacy = prompt_templates_hash(rendered)
        assert Manifest.load(run / "manifest.json").hashes.prompt_templates == legacy
        assert _stored(run) == [rendered.as_dict()]

        replayed = replay_run(
            run,
            tmp_path / "replayed",
            clock=FakeClock(),
            rand=random.Random(1),
            dataset=DATASET,
            progress=False,
        )
        report = asyncio.run(replayed)
        assert report.ok, [c for c in report.checks if not c.ok]

        # One slot made pending again: the resume is not refused as a changed dataset, and runs it.
        (db,) = (run / "db").glob("*.db")
        with closing(sqlite3.connect(db)) as conn, conn:
            conn.execute("UPDATE run_results SET s0_created_at = NULL WHERE rowid = 1")
        summary = _record(sim, tmp_path)
    assert summary.slots_run == 1 and not summary.errors
    assert Manifest.load(run / "manifest.json").hashes.prompt_templates == legacy
    assert _stored(run) == [rendered.as_dict()]
    report = verify_path(run, dataset=DATASET)
    assert report.ok, [c for c in report.checks if not c.ok]
