"""A recorded run walks each backoff sequence per sample (paper App. B.7), with samples concurrent."""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict
from pathlib import Path

from oracleproto.context import current_call_context
from oracleproto.dataset.demo import demo_db_path
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator

Sample = tuple[str, str, int]


class SampleSleeps(FakeClock):
    """A fake clock that notes, for every sleep, the sample and step it was taken for."""

    def __init__(self) -> None:
        super().__init__()
        self.by_sample: dict[Sample, list[tuple[int, float]]] = defaultdict(list)

    async def sleep(self, seconds: float) -> None:
        """Record who slept, then sleep as the fake clock does."""
        ctx = current_call_context()
        assert ctx is not None, "every backoff of a run is taken on behalf of a sample"
        self.by_sample[(ctx.model, ctx.question_id, ctx.sample)].append((ctx.step, seconds))
        await super().sleep(seconds)


def test_each_sample_continues_its_sequence_across_steps_and_starts_from_the_first_entry(
    tmp_path: Path,
) -> None:
    clock = SampleSleeps()
    spec = SimRunSpec(models=1, samples=2, runs_root=tmp_path, detector=False)
    # Only the chat endpoint fails (5xx), so every sleep is a step of the LLM's 5xx sequence.
    config = SimConfig(seed=3, chat=FaultConfig(fail_5xx=0.35), search=FaultConfig())
    with Simulator(config) as sim:
        settings = simulated_settings(sim, spec)
        options = RunOptions(
            settings=settings, source_db=demo_db_path(), runs_root=tmp_path, mode="record", progress=False
        )
        asyncio.run(execute_run(options, clock=clock, rand=random.Random(0)))
    sequence = settings.llm.backoff_server_5xx_s
    assert len(clock.by_sample) > 1
    for sample, sleeps in clock.by_sample.items():
        expected = [sequence[min(i, len(sequence) - 1)] for i in range(len(sleeps))]
        assert [seconds for _, seconds in sleeps] == expected, sample
    # The case that tells per-sample from per-call positions: retries in two different steps.
    assert any(len({step for step, _ in sleeps}) > 1 for sleeps in clock.by_sample.values())
