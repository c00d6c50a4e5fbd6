"""Runs that hit provider limits stop resumably, resume to the uninterrupted result and replay (issue 11).

Against the simulator, in-process with a ``FakeClock`` (no real waiting): a ``Retry-After`` above
``RETRY_AFTER_MAX_S``, a Tavily plan running out (432 on every key), an unreachable LLM base URL
(the circuit breaker). The credit of the LLM account running out is driven through the real
command line (``oracleproto sim run --llm-credit``) in ``test_quota_cli.py``.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import ProviderUnavailableError, QuotaError, RunStoppedError
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.replay import replay_run
from oracleproto.settings.model import Settings
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator

RUN_ID = "20260103-040506-c0de"
SPEC = {"models": 1, "samples": 2, "detector": False}
TOTAL = 32

Reader = Callable[[Path], dict[Any, dict[str, Any]]]


def record(root: Path, config: SimConfig, patch: Callable[[Settings], Settings] | None = None) -> RunSummary:
    """Record (or resume) ``RUN_ID`` under ``root`` against a fresh simulator."""
    with Simulator(config) as sim:
        settings = simulated_settings(sim, SimRunSpec(runs_root=root, **SPEC))  # type: ignore[arg-type]
        if patch is not None:
            settings = patch(settings)
        options = RunOptions(settings, demo_db_path(), root, run_id=RUN_ID, progress=False)
        return asyncio.run(execute_run(options, clock=FakeClock(), rand=random.Random(0)))


def log_events(root: Path, name: str) -> list[dict[str, Any]]:
    path = root / RUN_ID / "logs" / f"{RUN_ID}.log"
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [e for e in events if e["event"] == name]


def unfinished(root: Path) -> bool:
    manifest = json.loads((root / RUN_ID / "manifest.json").read_text(encoding="utf-8"))
    return manifest["finished_at"] is None


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory, slot_reader: Reader) -> dict[Any, dict[str, Any]]:
    """The uninterrupted run's slots."""
    root = tmp_path_factory.mktemp("uninterrupted")
    summary = record(root, SimConfig(seed=0))
    assert summary.slots_run == summary.slots_total == TOTAL
    slots = slot_reader(root / RUN_ID)
    assert all(cells["error"] is None for cells in slots.values())
    return slots


def stop_then_resume(
    root: Path,
    failing: SimConfig,
    expected: type[RunStoppedError],
    patch: Callable[[Settings], Settings] | None = None,
) -> RunStoppedError:
    """Record until the run stops with ``expected``; then resume against a healthy simulator."""
    with pytest.raises(expected) as info:
        record(root, failing, patch)
    assert unfinished(root)
    assert f"run {RUN_ID} stopped and is resumable" in str(info.value)
    assert f"--run-id {RUN_ID}" in str(info.value)
    resumed = record(root, SimConfig(seed=0))
    assert 0 < resumed.slots_run <= TOTAL and not unfinished(root)
    return info.value


async def assert_replays(run_root: Path, out: Path) -> None:
    report = await replay_run(run_root, out, clock=FakeClock(), rand=random.Random(0), progress=False)
    assert [(c.what, c.detail) for c in report.checks if not c.ok] == []


async def test_retry_after_above_the_cap_stops_then_resumes_to_the_uninterrupted_run(
    tmp_path: Path, baseline: dict[Any, dict[str, Any]], slot_reader: Reader
) -> None:
    faults = FaultConfig(fail_429=0.25, retry_after_s=3600)
    error = await asyncio.to_thread(
        stop_then_resume, tmp_path, SimConfig(seed=0, chat=faults, search=faults), ProviderUnavailableError
    )
    # The LLM (Retry-After: 3600) or the search pool (a key cooling for 3600 s) stops first.
    assert "asked to wait" in str(error) and "RETRY_AFTER_MAX_S=300" in str(error)
    aborted = log_events(tmp_path, "run_aborted")
    assert [e["reason"] for e in aborted] == ["provider_unavailable"]
    assert slot_reader(tmp_path / RUN_ID) == baseline
    await assert_replays(tmp_path / RUN_ID, tmp_path / "replayed")


async def test_waits_below_the_cap_are_logged_with_channel_model_reason_and_seconds(tmp_path: Path) -> None:
    faults = FaultConfig(fail_429=0.25, retry_after_s=30)
    summary = await asyncio.to_thread(record, tmp_path, SimConfig(seed=0, chat=faults))
    assert summary.slots_run == TOTAL
    waits = log_events(tmp_path, "waiting")
    assert waits, "a 429 with Retry-After: 30 must show as a wait"
    assert {(e["channel"], e["model"], e["reason"], e["seconds"]) for e in waits} == {
        ("llm", "sim/careful", "rate_limit, Retry-After", 30.0)
    }


async def test_a_tavily_plan_running_out_stops_and_its_432s_do_not_poison_the_resume(
    tmp_path: Path, baseline: dict[Any, dict[str, Any]], slot_reader: Reader
) -> None:
    exhausted = SimConfig(seed=0, search=FaultConfig(quota_after=6))
    error = await asyncio.to_thread(stop_then_resume, tmp_path, exhausted, QuotaError)
    assert error.channel == "search" and "432" in str(error) and "add a key" in str(error)
    assert [e["reason"] for e in log_events(tmp_path, "run_aborted")] == ["quota"]
    # The resume re-sent every search that ended in 432 (a replayed 432 would stop it again).
    assert slot_reader(tmp_path / RUN_ID) == baseline
    await assert_replays(tmp_path / RUN_ID, tmp_path / "replayed")


async def test_an_unreachable_llm_trips_the_circuit_breaker_instead_of_failing_every_sample(
    tmp_path: Path, baseline: dict[Any, dict[str, Any]], slot_reader: Reader, closed_port: int
) -> None:
    port = closed_port

    def unreachable(settings: Settings) -> Settings:
        llm = settings.llm.model_copy(update={"base_url": f"http://127.0.0.1:{port}/v1"})
        return settings.model_copy(update={"llm": llm})

    error = await asyncio.to_thread(
        stop_then_resume, tmp_path, SimConfig(seed=0), ProviderUnavailableError, unreachable
    )
    message = str(error)
    assert "circuit breaker" in message and "first 8 llm calls" in message
    assert "ConnectError" in message and f"127.0.0.1:{port}" in message and error.channel == "llm"
    first_session = log_events(tmp_path, "sample_done")
    # Only the calls before the breaker tripped could end as failed samples (redone on resume).
    failed = [e for e in first_session if e["error"] is not None]
    assert len(failed) < 8 and {e["error"] for e in failed} <= {"network"}
    assert slot_reader(tmp_path / RUN_ID) == baseline
    await assert_replays(tmp_path / RUN_ID, tmp_path / "replayed")
