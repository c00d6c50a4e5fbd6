"""A refresh stopped mid-way (revoked key, kill -9) resumes with the same run id (issue 8 + resume rule)."""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from oracleproto.errors import AuthError, OracleprotoError, StoreError
from oracleproto.primitives.clock import SystemClock
from oracleproto.refresh import RefreshOptions, parse_selector, refresh_run, zero_drift
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.harness import SIM_LLM_KEY
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.transport.layout import list_generations
from tests.refresh.conftest import ORIGINAL, Scenario, _settings, refresh
from tests.runner.conftest import comparable, read_slots

RESUMED = "20260101-000000-0c01"
TOTAL_SLOTS = 64  # 2 models x 16 questions x 2 samples
DEADLINE_S = 120.0


def done_slots(run_dir: Path) -> dict[Any, dict[str, Any]]:
    """Raw cells of the slots done so far (empty before the DBs exist)."""
    try:
        slots = read_slots(run_dir)
    except (sqlite3.OperationalError, OracleprotoError):
        return {}
    return {k: c for k, c in slots.items() if c["created_at"] is not None and c["error"] is None}


def semantic(run_dir: Path) -> dict[Any, dict[str, Any]]:
    return {slot: comparable(cells) for slot, cells in read_slots(run_dir).items()}


@pytest.fixture
def old(original: Path, tmp_path: Path) -> Path:
    """A private copy of the original recording."""
    target = tmp_path / ORIGINAL
    shutil.copytree(original, target)
    return target


def test_a_refresh_stopped_by_a_revoked_key_resumes_into_the_same_generation(
    old: Path, unchanged: Scenario
) -> None:
    new = old.parent / RESUMED
    config = SimConfig(seed=0, chat=FaultConfig(latency_ms=20))
    with Simulator(config) as sim:

        def revoke_after_some_samples() -> None:
            give_up = time.monotonic() + DEADLINE_S
            while len(done_slots(new)) < 6 and time.monotonic() < give_up:
                time.sleep(0.005)
            sim.handler.config = replace(
                config, chat=replace(config.chat, revoked_keys=frozenset({SIM_LLM_KEY}))
            )

        watcher = threading.Thread(target=revoke_after_some_samples, daemon=True)
        watcher.start()
        options = RefreshOptions(
            old_run=old, settings=_settings(sim, old.parent, None), runs_root=old.parent, run_id=RESUMED,
            progress=False,
        )  # fmt: skip
        with pytest.raises(AuthError, match=f"resumable.*--refresh {ORIGINAL} --run-id {RESUMED}"):
            asyncio.run(refresh_run(options, clock=SystemClock(), rand=random.Random(1)))
        watcher.join(timeout=DEADLINE_S)
    kept = done_slots(new)
    assert 6 <= len(kept) < TOTAL_SLOTS
    manifest = json.loads((new / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["refresh"] == {"of": ORIGINAL, "generation": 1, "selection": []}
    assert manifest["finished_at"] is None

    result = refresh(old, RESUMED)  # the same refresh again, key fixed

    assert result.summary.slots_done_before == len(kept)
    after = read_slots(new)
    assert {slot: after[slot] for slot in kept} == kept  # done before the stop: untouched
    assert len(after) == TOTAL_SLOTS and all(c["created_at"] and c["error"] is None for c in after.values())
    assert list_generations(new / "cassettes") == [0, 1]  # resumed into generation 1, no third one
    assert zero_drift(result.audit), result.audit["entries"]["drift"]
    # Equal to a refresh that was never interrupted.
    assert semantic(new) == semantic(unchanged.result.new.root)
    assert result.audit["cost"] == unchanged.audit["cost"]


def test_a_refresh_resumes_only_as_the_refresh_it_was(old: Path, unchanged: Scenario) -> None:
    done = unchanged.result.new.root
    target = old.parent / done.name
    shutil.copytree(done, target)
    with Simulator(SimConfig(seed=0)) as sim:
        settings = _settings(sim, old.parent, None)

        def start(select: tuple[str, ...] = (), run_id: str = done.name) -> None:
            options = RefreshOptions(
                old_run=old, settings=settings, runs_root=old.parent, run_id=run_id,
                selector=parse_selector(select), progress=False,
            )  # fmt: skip
            asyncio.run(refresh_run(options, clock=SystemClock(), rand=random.Random(1)))

        with pytest.raises(StoreError, match="started with no --select; resume it with the same selection"):
            start(("model=sim/hasty",))
        plain = old.parent / "20260101-000000-0c02"
        shutil.copytree(old, plain)
        manifest = json.loads((plain / "manifest.json").read_text(encoding="utf-8"))
        (plain / "manifest.json").write_text(json.dumps({**manifest, "run_id": plain.name}), encoding="utf-8")
        with pytest.raises(StoreError, match="is an existing run, not a refresh"):
            start(run_id=plain.name)
        (old.parent / "20260101-000000-0c03").mkdir()
        (old.parent / "20260101-000000-0c03" / "notes.txt").write_text("mine")
        with pytest.raises(StoreError, match="already exists and is not a run directory"):
            start(run_id="20260101-000000-0c03")
    assert (old.parent / "20260101-000000-0c03" / "notes.txt").read_text() == "mine"


def test_a_finished_refresh_rerun_changes_nothing(old: Path, unchanged: Scenario) -> None:
    done = unchanged.result.new.root
    target = old.parent / done.name
    shutil.copytree(done, target)
    before = read_slots(target)
    result = refresh(old, done.name)
    assert result.summary.slots_run == 0
    assert list_generations(target / "cassettes") == [0, 1]
    assert read_slots(target) == before  # every sample cell as it was
    assert zero_drift(result.audit)


def _command(runs_root: Path) -> list[str]:
    # The child restores Python's SIGINT handler (a backgrounded test runner passes SIGINT ignored).
    entry = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from oracleproto.cli.main import main; main()"
    )
    return [
        sys.executable, "-c", entry,
        "sim", "run", "--personas", "2", "--samples", "2", "--runs-root", str(runs_root), "--no-progress",
        "--refresh", ORIGINAL, "--run-id", RESUMED, "--latency-ms", "5",
    ]  # fmt: skip


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT], ids=["kill-9", "ctrl-c"])
def test_a_refresh_stopped_mid_way_is_completed_by_the_same_command(
    old: Path, unchanged: Scenario, stop: signal.Signals
) -> None:
    new = old.parent / RESUMED
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(_command(old.parent), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        give_up = time.monotonic() + DEADLINE_S
        while len(done_slots(new)) < 20:
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < give_up, "the refresh did not reach its stop point"
            time.sleep(0.01)
        proc.send_signal(stop)
    finally:
        _, err = proc.communicate(timeout=DEADLINE_S)
    if stop == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 130, err.decode()
        assert err.decode().strip().splitlines()[-1] == (
            f"interrupted: refresh {RESUMED} of {ORIGINAL} stopped and is resumable: rerun with "
            f"--refresh {ORIGINAL} --run-id {RESUMED} (finished samples are kept)"
        )
    kept = done_slots(new)
    assert 20 <= len(kept) < TOTAL_SLOTS

    rerun = subprocess.run(_command(old.parent), capture_output=True, text=True, timeout=300, check=False)

    assert rerun.returncode == 0, rerun.stderr
    assert "zero drift: provider 0" in rerun.stdout
    after = read_slots(new)
    assert {slot: after[slot] for slot in kept} == kept
    assert list_generations(new / "cassettes") == [0, 1]
    assert semantic(new) == semantic(unchanged.result.new.root)


def test_an_unfinished_run_is_not_refreshed(old: Path) -> None:
    manifest = old / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    manifest.write_text(json.dumps({**data, "finished_at": None}), encoding="utf-8")
    with pytest.raises(StoreError, match=f"run {ORIGINAL} has not finished .*--run-id {ORIGINAL}"):
        refresh(old, RESUMED)
    assert not (old.parent / RESUMED).exists()


def test_a_refresh_stopped_before_its_manifest_starts_on_its_copy(old: Path) -> None:
    target = old.parent / RESUMED
    shutil.copytree(old / "cassettes", target / "cassettes")
    for empty in ("db", "analysis", "logs"):
        (target / empty).mkdir()
    (target / ".lock").write_text("4242\n")
    result = refresh(old, RESUMED)
    assert result.summary.slots_done_before == 0
    assert list_generations(target / "cassettes") == [0, 1]
    assert zero_drift(result.audit)
