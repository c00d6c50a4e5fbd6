"""A run keeps 16 samples in flight per main-LLM slot, and no more.

More samples than LLM slots keep the LLM channel busy while other samples wait on search and the
detector (docs/design/performance.md, the live-scheduling rules); the same number bounds how far
a spend cap can overshoot (docs/design/architecture.md). Both documents name 16: a change of the
rule must change them too.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from oracleproto.runner import sample_pipeline
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from tests.runner.conftest import record_with

RUN_ID = "20260301-120000-0a1f"


class InFlight:
    """Counts the samples inside ``run_job_sample`` at once, around the real function."""

    def __init__(self) -> None:
        self.real = sample_pipeline.run_job_sample
        self.active = 0
        self.peak = 0
        self.calls = 0

    async def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.active += 1
        self.calls += 1
        self.peak = max(self.peak, self.active)
        try:
            # Let every other task that can start a sample start it before this one goes on: all
            # the run's samples are created at once, so the peak is what the run admits at once.
            for _ in range(3):
                await asyncio.sleep(0)
            return await self.real(*args, **kwargs)
        finally:
            self.active -= 1


@pytest.mark.parametrize("llm_slots", [1, 2])
def test_samples_in_flight_are_16_per_llm_slot(
    llm_slots: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counter = InFlight()
    monkeypatch.setattr(sample_pipeline, "run_job_sample", counter)
    # No detector: its calls do not change what is admitted, and the test stays cheap.
    spec = SimRunSpec(models=2, samples=3, runs_root=tmp_path, detector=False)
    with Simulator(SimConfig(seed=0)) as sim:
        settings = simulated_settings(sim, spec)
        settings = settings.model_copy(
            update={"llm": settings.llm.model_copy(update={"max_concurrency": llm_slots})}
        )
        summary = record_with(settings, tmp_path, RUN_ID)
    assert summary.slots_run == counter.calls
    assert counter.calls > 16 * llm_slots, "the run must have more samples than it admits at once"
    assert counter.peak == 16 * llm_slots
