"""A replay split over processes writes exactly what one process writes, and fails as cleanly."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.errors import OracleprotoError, ReplayMissError
from oracleproto.primitives import killpoints
from oracleproto.primitives.clock import FakeClock
from oracleproto.primitives.fileio import atomic_write
from oracleproto.runner import replay_shards
from oracleproto.runner.replay import default_processes, replay_run
from oracleproto.runner.replay_shards import split_by_question
from oracleproto.store import ModelStore
from oracleproto.transport import replay_index
from oracleproto.transport.fileio import dump_entries, read_entries
from tests.runner.conftest import replay_offline


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, record_sim: Any) -> Path:
    """A 2-model run with 2 samples per question."""
    summary = record_sim(tmp_path_factory.mktemp("rec"), models=2, samples=2, analysis=False)
    return Path(summary.run.root)


def test_two_processes_replay_the_run_byte_for_byte_and_report_as_one(recorded: Path, tmp_path: Path) -> None:
    alone = replay_offline(recorded, tmp_path / "alone", processes=1)
    shared = replay_offline(recorded, tmp_path / "shared", processes=2)
    assert alone.ok and shared.ok, [c for c in shared.checks if not c.ok]
    assert [c.what for c in shared.checks] == [c.what for c in alone.checks]
    # The session report adds up to the single process's: requests summed, distinct keys a union.
    assert shared.summary.traffic == alone.summary.traffic
    assert shared.summary.slots_run == alone.summary.slots_run > 0
    assert shared.summary.errors == alone.summary.errors
    assert shared.summary.failures.lines() == alone.summary.failures.lines()
    # Every sample row's entry keys were taken by the process that ran it.
    for db in sorted((shared.replayed / "db").glob("*.db")):
        with (
            ModelStore.open_existing(db) as mine,
            ModelStore.open_existing(alone.replayed / "db" / db.name) as ref,
        ):
            assert mine.sample_entry_keys() == ref.sample_entry_keys()
    assert multiprocessing.active_children() == []


def test_three_processes_replay_the_run_too(recorded: Path, tmp_path: Path) -> None:
    report = replay_offline(recorded, tmp_path / "three", processes=3)
    assert report.ok, [c for c in report.checks if not c.ok]
    assert multiprocessing.active_children() == []


def test_workers_started_for_a_run_with_nothing_to_run_are_released(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[replay_shards.ReplayShard] = []
    real_start = replay_shards.start_workers

    def spy(count: int) -> list[replay_shards.ReplayShard]:
        started.extend(real_start(count))
        return started

    monkeypatch.setattr("oracleproto.runner.replay.start_workers", spy)
    # A one-slot share list: the split leaves the worker nothing, so it is released unused.
    monkeypatch.setattr(replay_shards, "split_by_question", lambda jobs, parts, **_: [jobs, []])
    report = replay_offline(recorded, tmp_path / "solo", processes=2)
    assert report.ok and len(started) == 1 and not started[0].alive
    assert multiprocessing.active_children() == []


def test_an_indexed_replay_uses_two_processes_by_default(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_index, "REPLAY_INDEX_MIN_BYTES", 0)  # the small run counts as large
    monkeypatch.setattr("oracleproto.runner.replay.usable_cpus", lambda: 2)
    cache = tmp_path / "cache"
    assert default_processes(cache) == 2 and default_processes(None) == 1
    # The first replay builds the index in this process, then the worker opens it built.
    first = replay_offline(recorded, tmp_path / "first", processes=2, cache_root=cache)
    again = replay_offline(recorded, tmp_path / "again", processes=2, cache_root=cache)
    assert first.ok and again.ok, [c for c in first.checks + again.checks if not c.ok]


def _drop_llm_entries_of(run: Path, question_id: str) -> int:
    dropped = 0
    for path in sorted((run / "cassettes" / "llm").glob("*.yaml")):
        entries = read_entries(path)
        kept = [e for e in entries if (e.context or {}).get("question_id") != question_id]
        dropped += len(entries) - len(kept)
        atomic_write(path, dump_entries(kept))
    return dropped


def _worker_questions(run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The questions the worker runs in a 2-process replay of ``run`` (seen in a replay of it)."""
    parts: list[list[Any]] = []

    def spy(jobs: list[Any], count: int, **weights: float) -> list[list[Any]]:
        parts.extend(split_by_question(jobs, count, **weights))
        return parts

    with monkeypatch.context() as patch:
        patch.setattr(replay_shards, "split_by_question", spy)
        assert replay_offline(run, tmp_path / "probe", processes=2).ok
    own, other = parts
    assert own and other
    return {job[1] for job in other}


def test_a_miss_in_the_worker_fails_the_replay_with_its_message_and_leaves_nothing(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    damaged = tmp_path / "damaged" / recorded.name
    shutil.copytree(recorded, damaged)
    for question in _worker_questions(damaged, tmp_path, monkeypatch):
        assert _drop_llm_entries_of(damaged, question) > 0
    out = tmp_path / "out"
    with pytest.raises(ReplayMissError) as caught:
        replay_offline(damaged, out, processes=2)
    # The worker's error, as one process raises it: it names the user's cassettes, not the copy's.
    assert str(caught.value).startswith("replay miss on channel llm: model ")
    assert str(damaged / "cassettes") in str(caught.value) and str(out) not in str(caught.value)
    assert not out.exists()
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_fails_the_replay_clearly_and_leaves_nothing(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The spawned worker reads the variable; this process never reaches that phase.
    monkeypatch.setenv(killpoints.ENV_VAR, "replay-worker:2")
    killpoints._configured.cache_clear()
    out = tmp_path / "out"
    try:
        with pytest.raises(OracleprotoError, match=r"replay worker process \d+ ended \(exit code -9\)"):
            replay_offline(recorded, out, processes=2)
    finally:
        killpoints._configured.cache_clear()
    assert not out.exists()
    assert multiprocessing.active_children() == []


def test_jobs_are_split_by_question_keeping_order() -> None:
    jobs: list[Any] = [
        (cell, q, s, "") for q in ("a", "b", "c", "d", "e") for cell in ("m1", "m2") for s in (0, 1)
    ]
    own, other = split_by_question(jobs, 2)
    assert {j[1] for j in own} == {"a", "c", "e"} and {j[1] for j in other} == {"b", "d"}
    assert own == [j for j in jobs if j[1] in "ace"] and other == [j for j in jobs if j[1] in "bd"]
    assert split_by_question(jobs, 1) == [jobs]
    assert [len(p) for p in split_by_question(jobs, 3)] == [8, 8, 4]
    # Weighted: this process takes fewer questions, spread through the run, still whole questions.
    many: list[Any] = [(None, f"q{i:03d}", s, "") for i in range(100) for s in (0, 1, 2)]
    mine, theirs = split_by_question(many, 2, first_weight=0.72)
    assert len({j[1] for j in mine}) == 42 and len({j[1] for j in theirs}) == 58
    assert {j[1] for j in mine[:30]} != {j[1] for j in mine[-30:]}  # not one block at the start
    assert all(j in many for j in mine + theirs) and len(mine) + len(theirs) == len(many)
    assert not {j[1] for j in mine} & {j[1] for j in theirs}


def test_a_cancelled_replay_ends_its_worker_and_its_reader_and_leaves_nothing(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    real_messages = replay_shards.ReplayShard.messages

    async def stalled(self: replay_shards.ReplayShard) -> AsyncIterator[tuple[Any, ...]]:
        async for message in real_messages(self):
            yield message
            reached.set()
            await asyncio.Event().wait()  # the main process stops reading here until it is cancelled

    # One message ahead: the reader thread is blocked handing over the second one when we cancel.
    monkeypatch.setattr(replay_shards, "MESSAGES_AHEAD", 1)
    monkeypatch.setattr(replay_shards.ReplayShard, "messages", stalled)

    async def main() -> None:
        task = asyncio.ensure_future(
            replay_run(recorded, out, clock=FakeClock(), rand=random.Random(1), progress=False, processes=2)
        )
        await reached.wait()
        assert len(multiprocessing.active_children()) == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    reached = asyncio.Event()
    asyncio.run(main())
    assert multiprocessing.active_children() == []
    assert not out.exists()
    deadline = time.monotonic() + 60  # a bound for a loaded machine, not a timing assertion
    while _readers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _readers() == []


def _readers() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("replay-shard-")]


def _processes_marked(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue  # gone meanwhile, or not ours to read
    return found


def test_a_replay_killed_outright_leaves_no_worker_running(recorded: Path, tmp_path: Path) -> None:
    # SIGKILL gives the main process no chance to stop its worker: the worker's next send fails.
    name, value = "ORACLEPROTO_SHARD_TEST_MARK", f"killed-{os.getpid()}-{tmp_path.name}"
    marker = f"{name}={value}"
    env = {**os.environ, killpoints.ENV_VAR: "commit:3", name: value}
    entry = "from oracleproto.cli.main import main; main()"
    args = ["replay", str(recorded), "--processes", "2", "--no-progress", "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-c", entry, *args], env=env, capture_output=True, timeout=300, check=False
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    deadline = time.monotonic() + 60  # a bound for a loaded machine, not a timing assertion
    while _processes_marked(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_marked(marker) == []


def test_asking_for_more_processes_than_cpus_is_refused_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(replay_shards, "usable_cpus", lambda: 2)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["replay", "demo", "--processes", "3", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert (
        "Invalid value for '--processes': 3 processes, but this process may run on 2 CPU(s)" in result.output
    )
    assert "choose at most 2" in result.output and "Traceback" not in result.output
    assert not out.exists() and multiprocessing.active_children() == []


def test_a_machine_that_cannot_start_a_worker_replays_in_one_process(
    recorded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_processes(count: int) -> list[Any]:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr("oracleproto.runner.replay.start_workers", no_processes)
    report = replay_offline(recorded, tmp_path / "alone", processes=2)
    assert report.ok, [c for c in report.checks if not c.ok]
    assert multiprocessing.active_children() == []
