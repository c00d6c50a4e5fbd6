"""A run another harness revision recorded is verified and re-scored, never resumed, replayed or refreshed."""

from __future__ import annotations

import asyncio
import json
import random
import shutil
from pathlib import Path

import pytest

from oracleproto._version import HARNESS_REVISION
from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import StoreError
from oracleproto.primitives.clock import SystemClock
from oracleproto.refresh.execute import RefreshOptions, refresh_run
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.runner.replay import replay_run
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store import RunDir
from tests.runner.conftest import SimRecorder

RUN_ID = "20260101-000000-0a0b"


def tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for folders)."""
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else None for p in sorted(root.rglob("*"))
    }


def set_revision(run: Path, revision: int | None) -> None:
    """Rewrite the manifest as a harness of ``revision`` wrote it (None: before the key existed)."""
    path = run / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("harness_revision", None)
    if revision is not None:
        data["harness_revision"] = revision
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished simulated run (1 model, n = 1, no detector) of this harness revision."""
    root = tmp_path_factory.mktemp("revision") / "runs"
    SimRecorder()(root, models=1, samples=1, run_id=RUN_ID, detector=False)
    return root / RUN_ID


@pytest.fixture
def old_run(recorded: Path, tmp_path: Path) -> Path:
    """A copy of the run whose manifest names no revision: recorded before the key existed (revision 1)."""
    copy = tmp_path / "runs" / RUN_ID
    shutil.copytree(recorded, copy)
    set_revision(copy, None)
    return copy


def test_a_run_records_the_harness_revision(recorded: Path) -> None:
    manifest = RunDir.open(recorded).load_manifest()
    assert manifest.harness_revision == HARNESS_REVISION
    assert json.loads((recorded / "manifest.json").read_text())["harness_revision"] == HARNESS_REVISION


def _expect_refusal(action: str, message: str, run: Path) -> None:
    assert f"run {RUN_ID} was recorded by harness revision 1" in message, message
    assert f"is revision {HARNESS_REVISION}" in message
    assert f"cannot {action} it byte for byte" in message
    assert "Nothing was written" in message and f"`oracleproto verify {RUN_ID}`" in message


def test_resume_of_an_older_revision_is_refused_before_anything_is_written(old_run: Path) -> None:
    runs_root = old_run.parent
    before = tree(runs_root)
    with Simulator(SimConfig(seed=0)) as sim:
        spec = SimRunSpec(models=1, samples=1, runs_root=runs_root, detector=False)
        options = RunOptions(
            settings=simulated_settings(sim, spec),
            source_db=demo_db_path(),
            runs_root=runs_root,
            mode="record",
            run_id=RUN_ID,
            progress=False,
        )
        with pytest.raises(StoreError) as refused:
            asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))
    _expect_refusal("resume", str(refused.value), old_run)
    assert tree(runs_root) == before  # no .lock, no manifest rewrite, no log line


def test_replay_of_an_older_revision_is_refused_and_leaves_no_output(old_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(StoreError) as refused:
        asyncio.run(replay_run(old_run, out, clock=SystemClock(), rand=random.Random(0), progress=False))
    _expect_refusal("replay", str(refused.value), old_run)
    assert not out.exists()


def test_a_newer_revision_is_refused_too(recorded: Path, tmp_path: Path) -> None:
    copy = tmp_path / "runs" / RUN_ID
    shutil.copytree(recorded, copy)
    set_revision(copy, HARNESS_REVISION + 1)
    with pytest.raises(StoreError) as refused:
        asyncio.run(
            replay_run(copy, tmp_path / "out", clock=SystemClock(), rand=random.Random(0), progress=False)
        )
    assert f"harness revision {HARNESS_REVISION + 1}" in str(refused.value)
    assert "a newer harness" in str(refused.value)


def test_refresh_of_an_older_revision_is_refused(old_run: Path, tmp_path: Path) -> None:
    with Simulator(SimConfig(seed=0)) as sim:
        spec = SimRunSpec(models=1, samples=1, runs_root=tmp_path / "new", detector=False)
        options = RefreshOptions(
            old_run=old_run,
            settings=simulated_settings(sim, spec),
            runs_root=tmp_path / "new",
            progress=False,
        )
        with pytest.raises(StoreError) as refused:
            asyncio.run(refresh_run(options, clock=SystemClock(), rand=random.Random(0)))
    _expect_refusal("refresh", str(refused.value), old_run)
    assert not (tmp_path / "new").exists()
