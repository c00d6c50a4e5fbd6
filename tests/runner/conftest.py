"""Helpers for the end-to-end runner tests: record against the simulator, read run DBs back."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from oracleproto.agent.result import SAMPLE_FIELDS
from oracleproto.cli.run import write_run_analysis
from oracleproto.dataset.demo import demo_db_path
from oracleproto.primitives.clock import Clock, FakeClock, SystemClock
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.replay import ReplayReport, replay_run
from oracleproto.settings.model import Settings
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.harness import SIM_LLM_KEY, SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store import RunDir

#: Per-slot columns whose values must be equal between two recordings of the same run.
SEMANTIC_FIELDS = (
    "final_answer_letters",
    "final_answer_raw",
    "correct",
    "parse_ok",
    "tool_calls_count",
    "react_steps",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "messages_trace",
    "search_calls",
    "error",
    "finish_reason",
    "nudges_used",
    "response_id",
)
#: Columns that legitimately differ between recordings (wall-clock stamps and latencies):
#: compared for presence only.
VOLATILE_FIELDS = ("created_at", "latency_ms")
#: Keys inside the JSON columns that hold latencies.
_VOLATILE_KEYS = {"latency_ms", "detector_latency_ms"}

Slot = tuple[str, str, int]


@dataclass(frozen=True)
class SimRecorder:
    """Records runs in-process: a fresh simulator, ``execute_run`` in record mode."""

    def __call__(
        self,
        runs_root: Path,
        *,
        models: int = 2,
        samples: int = 2,
        run_id: str | None = None,
        seed: int = 0,
        faults: FaultConfig | None = None,
        analysis: bool = False,
        clock: Clock | None = None,
        llm_key: str = SIM_LLM_KEY,
        detector: bool = True,
        circuit_breaker_calls: int = 8,
    ) -> RunSummary:
        """Record one run against a new simulator and return its summary."""
        fault_config = faults or FaultConfig()
        spec = SimRunSpec(
            models=models,
            samples=samples,
            runs_root=runs_root,
            llm_key=llm_key,
            detector=detector,
            circuit_breaker_calls=circuit_breaker_calls,
        )
        with Simulator(SimConfig(seed=seed, chat=fault_config, search=fault_config)) as sim:
            options = RunOptions(
                settings=simulated_settings(sim, spec),
                source_db=demo_db_path(),
                runs_root=runs_root,
                mode="record",
                run_id=run_id,
                progress=False,
                after=write_run_analysis if analysis else None,
            )
            return asyncio.run(execute_run(options, clock=clock or SystemClock(), rand=random.Random(seed)))


def record_with(
    settings: Settings,
    runs_root: Path,
    run_id: str,
    *,
    after: Callable[[RunDir, Settings], None] | None = None,
) -> RunSummary:
    """Record (or resume) ``run_id`` under ``settings`` against whatever servers they name."""
    options = RunOptions(
        settings=settings,
        source_db=demo_db_path(),
        runs_root=runs_root,
        mode="record",
        run_id=run_id,
        progress=False,
        after=after,
    )
    return asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))


def replay_offline(
    original: Path,
    out: Path,
    *,
    processes: int | None = None,
    cache_root: Path | None = None,
    analysis: bool = False,
) -> ReplayReport:
    """``replay_run`` of ``original`` into ``out`` with a fake clock, no progress display
    (``analysis``: with the analysis pass, as the CLI replays a run that has one)."""
    return asyncio.run(
        replay_run(
            original,
            out,
            clock=FakeClock(),
            rand=random.Random(1),
            progress=False,
            after=write_run_analysis if analysis else None,
            cache_root=cache_root,
            processes=processes,
        )
    )


@pytest.fixture(scope="session")
def record_sim() -> SimRecorder:
    """Callable recording a simulated run: ``record_sim(runs_root, models=2, samples=2, ...)``."""
    return SimRecorder()


def _strip_volatile(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_volatile(v) for k, v in value.items() if k not in _VOLATILE_KEYS}
    if isinstance(value, list):
        return [_strip_volatile(v) for v in value]
    return value


def read_slots(run_root: Path) -> dict[Slot, dict[str, Any]]:
    """Every (model, question, sample) slot of a run directory with its 24 per-sample columns."""
    run = RunDir.open(run_root)
    manifest = run.load_manifest()
    slots: dict[Slot, dict[str, Any]] = {}
    for slug, path in run.model_db_paths(manifest).items():
        with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as conn:
            conn.row_factory = sqlite3.Row
            for row in conn.execute("SELECT * FROM run_results ORDER BY question_id"):
                for i in range(manifest.sampling_n):
                    slots[(slug, row["question_id"], i)] = {f: row[f"s{i}_{f}"] for f in SAMPLE_FIELDS}
        conn.close()
    return slots


def comparable(cells: dict[str, Any]) -> dict[str, Any]:
    """The semantic columns of a slot (JSON decoded, latencies removed) plus presence of the rest."""
    out: dict[str, Any] = {}
    for name in SEMANTIC_FIELDS:
        value = cells[name]
        if name in ("messages_trace", "search_calls") and value is not None:
            value = _strip_volatile(json.loads(value))
        out[name] = value
    for name in VOLATILE_FIELDS:
        out[f"{name}_present"] = cells[name] is not None
    return out


@pytest.fixture(scope="session")
def slot_reader() -> Callable[[Path], dict[Slot, dict[str, Any]]]:
    """``slot_reader(run_dir)`` → ``{(slug, question, sample): comparable cells}``."""

    def read(run_root: Path) -> dict[Slot, dict[str, Any]]:
        return {slot: comparable(cells) for slot, cells in read_slots(run_root).items()}

    return read


@pytest.fixture(scope="session")
def raw_slot_reader() -> Callable[[Path], dict[Slot, dict[str, Any]]]:
    """``raw_slot_reader(run_dir)`` → ``{(slug, question, sample): the 24 raw cells}``."""
    return read_slots
