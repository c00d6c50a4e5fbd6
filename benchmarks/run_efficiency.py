"""Runner scheduling efficiency: wall time of a recorded run against its ideal bound.

Runs the shared 80-question set (``../shared/datasets/oracleproto-80.db``, read in place) through
the simulator with a fixed latency on every request, via ``execute_run`` in record mode into a
temporary directory, and compares the wall time with the ideal bound

    T_ideal = max( N_llm · L / P_llm,  N_search · L / P_search,  N_detector · L / P_detector,
                   max over samples of (LLM turns of the sample) · L )

where N_* are the requests the simulator actually served on each channel (the live entries of the
recorded cassettes; cache hits cost nothing and are not counted), L is the injected latency and
P_* the channel concurrency caps.
Every schedule needs at least that long: each channel can hold at most P requests of L seconds
in flight, and one sample's LLM turns are strictly sequential. Efficiency = T_ideal / T_wall
(target ≥ 0.9); run setup, admission and store writes count against it.

The simulator runs in its own process (``oracleproto sim serve``), as a provider would: in the
harness's process its request handling would compete for the same interpreter lock and the
benchmark would measure the simulator, not the runner.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.settings.model import Settings
from oracleproto.sim.harness import ServedSimulator, SimRunSpec, simulated_settings
from oracleproto.store import ModelStore
from oracleproto.transport import cassette_stats

SHARED_DB = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "oracleproto-80.db"
LATENCY_S = 0.2
MODELS = 2
SAMPLES = 3
#: The LLM channel is the one under test; the side channels get room so they do not bind.
LLM_CONCURRENCY = 5
SEARCH_CONCURRENCY = 16
DETECTOR_CONCURRENCY = 64


@dataclass(frozen=True)
class Measurement:
    """One benchmark run."""

    wall_s: float
    served: dict[str, int]
    max_turns: int
    samples: int

    def bound_terms(self, settings: Settings) -> dict[str, float]:
        """Each term of the ideal bound, in seconds."""
        return {
            "llm": self.served.get("llm", 0) * LATENCY_S / settings.llm.max_concurrency,
            "search": self.served.get("search", 0) * LATENCY_S / settings.search.max_concurrency,
            "detector": self.served.get("detector", 0) * LATENCY_S / settings.detector.max_concurrency,
            "critical path": self.max_turns * LATENCY_S,
        }


@contextmanager
def simulator_process(latency_ms: float) -> Iterator[ServedSimulator]:
    """``oracleproto sim serve`` in a child process; yields once it listens."""
    command = [
        sys.executable,
        "-c",
        "from oracleproto.cli.main import main; main()",
        "sim",
        "serve",
        "--latency-ms",
        str(latency_ms),
        "--seed",
        "0",
    ]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        first = child.stdout.readline()
        if "listening on " not in first:
            raise RuntimeError(f"simulator did not start: {first!r}")
        url = first.split("listening on ", 1)[1].split()[0]
        yield ServedSimulator(url)
    finally:
        child.terminate()
        child.wait(timeout=10)


def _settings(sim: ServedSimulator, runs_root: Path) -> Settings:
    spec = SimRunSpec(models=MODELS, samples=SAMPLES, runs_root=runs_root)
    base = simulated_settings(sim, spec)
    return base.model_copy(
        update={
            "llm": base.llm.model_copy(update={"max_concurrency": LLM_CONCURRENCY}),
            "search": base.search.model_copy(update={"max_concurrency": SEARCH_CONCURRENCY}),
            "detector": base.detector.model_copy(update={"max_concurrency": DETECTOR_CONCURRENCY}),
        }
    )


def _max_turns(run_root: Path) -> tuple[int, int]:
    turns, samples = 0, 0
    for db in sorted((run_root / "db").glob("*.db")):
        with ModelStore.open_existing(db) as store:
            for question_id, sample in sorted(store.done_slots()):
                result = store.read_sample(question_id, sample)
                if result is not None and result.react_steps:
                    turns = max(turns, result.react_steps)
                    samples += 1
    return turns, samples


def measure(tmp: Path) -> tuple[Measurement, Settings]:
    """Record one run against a simulator with ``LATENCY_S`` on every request."""
    with simulator_process(LATENCY_S * 1000) as sim:
        settings = _settings(sim, tmp)
        options = RunOptions(settings=settings, source_db=SHARED_DB, runs_root=tmp, progress=False)
        started = time.perf_counter()
        summary = asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))
        wall = time.perf_counter() - started
    # No faults are injected, so every stored entry is one request the simulator served.
    stats = cassette_stats(summary.run.cassettes_dir)
    served = {channel: c.entries for channel, c in stats.channels.items()}
    if summary.errors:
        raise RuntimeError(f"benchmark run had errors: {summary.errors}")
    turns, samples = _max_turns(summary.run.root)
    return Measurement(wall, served, turns, samples), settings


def main() -> None:
    """Print wall time, the ideal bound term by term, and the efficiency."""
    if not SHARED_DB.is_file():
        print(f"skipped: {SHARED_DB} not found (the shared data must sit beside the repository)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        m, settings = measure(Path(tmp))
    terms = m.bound_terms(settings)
    ideal = max(terms.values())
    print(
        f"run: 80 questions x {MODELS} models x n={SAMPLES} -> {m.samples} answered samples; "
        f"latency {LATENCY_S * 1000:.0f} ms per request; caps llm={settings.llm.max_concurrency} "
        f"search={settings.search.max_concurrency} detector={settings.detector.max_concurrency}"
    )
    print("served requests: " + ", ".join(f"{k}={v}" for k, v in sorted(m.served.items())))
    for name, value in terms.items():
        print(f"  bound term {name:<14} {value:7.2f} s")
    print(
        f"ideal bound {ideal:.2f} s, wall {m.wall_s:.2f} s, efficiency {ideal / m.wall_s:.3f} (target >= 0.9)"
    )


if __name__ == "__main__":
    main()
    sys.exit(0)
