"""kill -9 a recording at several points, rerun the same run id, get the uninterrupted result (issue 5).

Runs the real command line in subprocesses, as a user does: ``oracleproto sim run --run-id ID``.
A kill point is "after K samples are in the DB" (K = 0 means as soon as the run has logged its start);
the DB is polled from this process. Every kill scenario runs in parallel with the others.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from oracleproto.errors import StoreError
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.replay import replay_run
from oracleproto.store import RunDir
from oracleproto.store.sample_entries import read_sample_keys

RUN_ID = "20260101-000000-abcd"
#: One model, n = 2, no detector: small enough to stay fast (the detector path is covered elsewhere).
ARGS = ("--personas", "1", "--samples", "2", "--seed", "0", "--no-detector", "--no-report", "--no-progress")
#: Kill points in samples stored: 0 (manifest only, nothing answered), early, late (of 32 slots).
#: Fixed rather than drawn so a failure names a reproducible point; the moment inside the
#: in-flight samples is whatever the scheduler makes it.
KILL_POINTS = (0, 9, 23)
#: How long a subprocess may take before the test gives up (a hang, not a speed assertion).
DEADLINE_S = 120.0


def command(runs_root: Path) -> list[str]:
    """``oracleproto sim run`` through the console entry point, in a fresh interpreter."""
    entry = "from oracleproto.cli.main import main; main()"
    return [
        sys.executable,
        "-c",
        entry,
        "sim",
        "run",
        "--runs-root",
        str(runs_root),
        "--run-id",
        RUN_ID,
        *ARGS,
    ]


def done_samples(run_root: Path) -> int:
    """Samples stored with a model answer (any DB of the run); 0 while nothing exists yet."""
    total = 0
    for db in sorted((run_root / "db").glob("*.db")):
        try:
            with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=5) as conn:
                names = [r[1] for r in conn.execute("PRAGMA table_info(run_results)")]
                created = [n for n in names if n.endswith("_created_at")]
                total += sum(
                    conn.execute(f"SELECT COUNT({c}) FROM run_results").fetchone()[0] for c in created
                )
            conn.close()
        except sqlite3.OperationalError:
            return 0  # the writer is still creating the schema
    return total


@dataclass
class Scenario:
    """One interrupted recording."""

    kill_at: int
    root: Path
    process: subprocess.Popen[bytes] | None = None
    killed_with: int | None = None
    #: Raw cells of every slot that was done when the process died.
    at_kill: dict[Any, dict[str, Any]] = field(default_factory=dict)

    @property
    def run_root(self) -> Path:
        """The run directory."""
        return self.root / RUN_ID

    def reached(self) -> bool:
        """True once the kill point is reached."""
        log = self.run_root / "logs" / f"{RUN_ID}.log"
        # The run_started event follows the manifest write; waiting for it keeps kill point 0
        # from landing before the first invocation has said it started.
        if not log.is_file() or '"run_started"' not in log.read_text(encoding="utf-8"):
            return False
        return done_samples(self.run_root) >= self.kill_at


def finish(process: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    """Wait for a subprocess; its exit code and output."""
    out, err = process.communicate(timeout=DEADLINE_S)
    return process.returncode, out.decode(), err.decode()


def spawn(root: Path) -> subprocess.Popen[bytes]:
    """Start one recording."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(command(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def snapshot_done(run_root: Path, read: Callable[[Path], dict[Any, dict[str, Any]]]) -> dict[Any, Any]:
    """Raw cells of the slots done so far; empty when the DB (or its schema) was not created yet."""
    try:
        slots = read(run_root)
    except (sqlite3.OperationalError, StoreError):
        # Kill point 0 can land between the manifest write and the creation of the model DBs.
        return {}
    return {k: c for k, c in slots.items() if c["created_at"] is not None and c["error"] is None}


def kill_at_points(scenarios: list[Scenario], read: Callable[[Path], dict[Any, dict[str, Any]]]) -> None:
    """Poll every recording; SIGKILL each one at its kill point and keep what it had done."""
    pending = list(scenarios)
    give_up = time.monotonic() + DEADLINE_S
    while pending:
        for scenario in list(pending):
            assert scenario.process is not None
            if scenario.reached():
                scenario.process.send_signal(signal.SIGKILL)
                scenario.killed_with, _, _ = finish(scenario.process)
                scenario.at_kill = snapshot_done(scenario.run_root, read)
                pending.remove(scenario)
            elif scenario.process.poll() is not None:
                code, _, err = finish(scenario.process)
                pytest.fail(f"run for kill point {scenario.kill_at} ended (exit {code}) before it: {err}")
        assert time.monotonic() < give_up, "recordings did not reach their kill points"
        time.sleep(0.01)


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory, raw_slot_reader: Callable[[Path], dict[Any, dict[str, Any]]]
) -> tuple[Path, list[Scenario]]:
    """An uninterrupted run, and one run per kill point killed there and then resumed."""
    base = tmp_path_factory.mktemp("resume")
    baseline = spawn(base / "uninterrupted")
    scenarios = [Scenario(k, base / f"killed-at-{k}") for k in KILL_POINTS]
    started = [baseline]
    try:
        for scenario in scenarios:
            scenario.process = spawn(scenario.root)
            started.append(scenario.process)
        kill_at_points(scenarios, raw_slot_reader)
        code, _, err = finish(baseline)
        assert code == 0, err
        resumed = [spawn(s.root) for s in scenarios]
        started.extend(resumed)
        for process in resumed:
            code, out, err = finish(process)
            assert code == 0, err
            assert out.strip().endswith(RUN_ID)
            assert f"run {RUN_ID}: 32 slots" in err
    finally:
        for process in started:
            if process.poll() is None:
                process.kill()
            finish(process)
    return base / "uninterrupted" / RUN_ID, scenarios


def test_each_run_was_really_killed_mid_way(runs: tuple[Path, list[Scenario]]) -> None:
    _, scenarios = runs
    assert len(scenarios) >= 3
    assert all(s.killed_with == -signal.SIGKILL for s in scenarios)
    logs = [(s.run_root / "logs" / f"{RUN_ID}.log").read_text(encoding="utf-8") for s in scenarios]
    for scenario, log in zip(scenarios, logs, strict=True):
        starts = [json.loads(line) for line in log.splitlines() if '"run_started"' in line]
        # Two invocations: the killed one, then the resume (which saw the earlier run).
        assert [e["resumed"] for e in starts] == [False, True], scenario.kill_at
        assert log.count('"run_finished"') == 1


def test_every_sample_present_exactly_once_and_equal_to_the_uninterrupted_run(
    runs: tuple[Path, list[Scenario]], slot_reader: Callable[[Path], dict[Any, dict[str, Any]]]
) -> None:
    baseline_dir, scenarios = runs
    expected = slot_reader(baseline_dir)
    assert len(expected) == 32
    assert all(cells["created_at_present"] for cells in expected.values())
    for scenario in scenarios:
        got = slot_reader(scenario.run_root)
        assert got.keys() == expected.keys(), scenario.kill_at
        diff = {slot: (got[slot], expected[slot]) for slot in expected if got[slot] != expected[slot]}
        assert diff == {}, f"kill point {scenario.kill_at}: {len(diff)} slots differ"
        log = (scenario.run_root / "logs" / f"{RUN_ID}.log").read_text(encoding="utf-8")
        done = [json.loads(line) for line in log.splitlines() if '"sample_done"' in line]
        keys = [(e["model"], e["question"], e["sample"]) for e in done]
        # No slot was run to completion twice across the kill and the resume (the kill may land
        # between a sample's DB commit and its log line, so the log can miss one, never repeat one).
        assert len(keys) == len(set(keys)) >= 32 - 1, scenario.kill_at


def test_samples_done_before_the_kill_are_kept_untouched(
    runs: tuple[Path, list[Scenario]], raw_slot_reader: Callable[[Path], dict[Any, dict[str, Any]]]
) -> None:
    _, scenarios = runs
    assert scenarios[0].at_kill == {}
    assert all(len(s.at_kill) >= s.kill_at for s in scenarios)
    for scenario in scenarios[1:]:
        after = raw_slot_reader(scenario.run_root)
        # Byte-equal cells, created_at and latency included: the resume did not redo them.
        assert {slot: after[slot] for slot in scenario.at_kill} == scenario.at_kill


def test_manifest_is_finished_after_resume(runs: tuple[Path, list[Scenario]]) -> None:
    baseline_dir, scenarios = runs
    reference = json.loads((baseline_dir / "manifest.json").read_text(encoding="utf-8"))
    # Digests over entries hold recording times, so they differ run to run; the keys do not.
    volatile = {"started_at", "finished_at", "cassettes", "sample_entries_root"}
    base = RunDir.open(baseline_dir)
    reference_keys = read_sample_keys(base.model_db_paths(base.load_manifest()))
    assert reference_keys is not None and len(reference_keys) == 32
    for scenario in scenarios:
        manifest = json.loads((scenario.run_root / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["finished_at"] is not None
        assert manifest["sample_entries_root"]
        assert {k: v for k, v in manifest.items() if k not in volatile} == {
            k: v for k, v in reference.items() if k not in volatile
        }
        run = RunDir.open(scenario.run_root)
        # Every sample used exactly the entries it used in the uninterrupted run.
        assert read_sample_keys(run.model_db_paths(run.load_manifest())) == reference_keys, scenario.kill_at


async def test_a_killed_and_resumed_recording_replays_byte_identically(
    runs: tuple[Path, list[Scenario]], tmp_path: Path
) -> None:
    _, scenarios = runs
    middle = scenarios[-1]
    report = await replay_run(
        middle.run_root, tmp_path, clock=FakeClock(), rand=random.Random(0), progress=False
    )
    assert [(c.what, c.detail) for c in report.checks if not c.ok] == []
    assert RunDir.open(report.replayed).load_manifest().finished_at is not None
