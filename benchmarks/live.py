"""Live-run scheduling efficiency under heavy-tailed latency, provider 429s with real waits, and 5xx.

A 2 × 80 × 3 run is recorded against the simulator in its own process (as a provider would
be), with log-normal latency (median ``MEDIAN_MS``, shape ``SIGMA``: a heavy tail), a fraction
``FAIL_429`` of requests answered 429 with a ``Retry-After`` of 1–5 s (drawn per request; the
harness honours it, so the waits are real), and a fraction ``FAIL_5XX`` answered 500/502/503. The
run uses the harness's real backoff schedule (no scaling). The ideal bound of that run is computed
from the work the provider did *successfully* (the latency of each call's successful attempt only):

    T_ideal = max( Σ llm successful latencies / P_llm,  Σ search … / P_search,  Σ detector … / P_detector,
                   max over samples of Σ that sample's successful main-LLM latencies )

No schedule can beat it: each channel holds at most P requests in flight, one sample's LLM turns
are sequential, and a failed attempt is work no ideal run needs. Efficiency = T_ideal / T_wall, so
every failed attempt, back-off and Retry-After wait, setup, admission, store write and the end of
run write count against it: a harness that retries too eagerly, waits longer than told, or
serialises its waits (one 429 holding up other samples) scores lower.
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.settings.model import Settings
from oracleproto.sim.harness import ServedSimulator, SimRunSpec, simulated_settings
from oracleproto.transport.store import CassetteStore

SHARED_DB = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "oracleproto-80.db"
MEDIAN_MS = 200.0
SIGMA = 0.5
FAIL_429 = 0.02
#: Retry-After of each injected 429: drawn from this range of whole seconds.
RETRY_AFTER_S = (1, 5)
FAIL_5XX = 0.01
MODELS = 2
SAMPLES = 3
#: Tuned caps: the side channels get room so the LLM channel (the provider's cap) binds.
TUNED = {"llm": 5, "search": 16, "detector": 64}


@contextmanager
def simulator_process(*, fail_429: float, fail_5xx: float = FAIL_5XX) -> Iterator[ServedSimulator]:
    """``oracleproto sim serve`` with log-normal latency in a child process; yields once it listens."""
    command = [
        sys.executable,
        "-c",
        "from oracleproto.cli.main import main; main()",
        "sim",
        "serve",
        "--latency-ms",
        str(MEDIAN_MS),
        "--latency-sigma",
        str(SIGMA),
        "--fail-429",
        str(fail_429),
        "--fail-5xx",
        str(fail_5xx),
        "--retry-after",
        str(RETRY_AFTER_S[0]),
        "--retry-after-max",
        str(RETRY_AFTER_S[1]),
        "--seed",
        "0",
    ]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        first = child.stdout.readline()
        if "listening on " not in first:
            raise RuntimeError(f"simulator did not start: {first!r}")
        yield ServedSimulator(first.split("listening on ", 1)[1].split()[0])
    finally:
        child.terminate()
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()


def _settings(sim: ServedSimulator, runs_root: Path, caps: dict[str, int] | None, run: LiveRun) -> Settings:
    # backoff_scale 1: the harness's real backoff schedule (``sim run`` scales it down for tests).
    spec = SimRunSpec(models=run.models, samples=run.samples, runs_root=runs_root, backoff_scale=1.0)
    base = simulated_settings(sim, spec)
    if run.question_limit is not None:
        limited = base.run.model_copy(update={"question_limit": run.question_limit})
        base = base.model_copy(update={"run": limited})
    if caps is None:
        return base
    return base.model_copy(
        update={
            "llm": base.llm.model_copy(update={"max_concurrency": caps["llm"]}),
            "search": base.search.model_copy(update={"max_concurrency": caps["search"]}),
            "detector": base.detector.model_copy(update={"max_concurrency": caps["detector"]}),
        }
    )


def successful_s(attempts: list[dict[str, Any]]) -> float:
    """Seconds of the attempts that succeeded (2xx): the only work an ideal run needs done."""
    ok = [a for a in attempts if isinstance(a.get("status"), int) and 200 <= a["status"] < 300]
    return sum(int(a.get("latency_ms") or 0) for a in ok) / 1000


def ideal_bound(cassettes: Path, settings: Settings) -> dict[str, float]:
    """Each term of the ideal bound (seconds), from the successful attempts the provider served."""
    busy: dict[str, float] = defaultdict(float)
    chains: dict[tuple[str, str, int], float] = defaultdict(float)
    for entry in CassetteStore(cassettes, writable=False).effective_entries():
        served = successful_s(entry.attempts)
        busy[entry.channel] += served
        if entry.channel == "llm" and entry.context is not None:
            ctx = entry.context
            chains[(ctx["model"], ctx["question_id"], ctx["sample"])] += served
    caps = {"llm": settings.llm.max_concurrency, "search": settings.search.max_concurrency}
    caps["detector"] = settings.detector.max_concurrency
    terms = {channel: busy.get(channel, 0.0) / cap for channel, cap in caps.items()}
    terms["critical path"] = max(chains.values(), default=0.0)
    return terms


@dataclass(frozen=True)
class LiveRun:
    """What one live run records: the simulator's faults and the run's size (the row's is the default)."""

    fail_429: float = FAIL_429
    fail_5xx: float = FAIL_5XX
    source_db: Path = SHARED_DB
    models: int = MODELS
    samples: int = SAMPLES
    #: Only the first N admitted questions (None: all; the row runs all of them).
    question_limit: int | None = None


def efficiency(
    caps: dict[str, int] | None, run: LiveRun = LiveRun()
) -> tuple[float, float, dict[str, float]]:
    """(efficiency, wall seconds, bound terms) of one recorded run with ``caps`` (None = defaults)."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        simulator_process(fail_429=run.fail_429, fail_5xx=run.fail_5xx) as sim,
    ):
        settings = _settings(sim, Path(tmp), caps, run)
        options = RunOptions(settings=settings, source_db=run.source_db, runs_root=Path(tmp), progress=False)
        started = time.perf_counter()
        summary = asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))
        wall = time.perf_counter() - started
        if summary.errors:
            raise RuntimeError(f"benchmark run had errors: {summary.errors}")
        terms = ideal_bound(summary.run.cassettes_dir, settings)
    return max(terms.values()) / wall, wall, terms


def main() -> None:
    """Print the efficiency with the default and the tuned caps."""
    for name, caps in (("default caps", None), ("tuned caps", TUNED)):
        eff, wall, terms = efficiency(caps)
        shown = ", ".join(f"{k} {v:.1f} s" for k, v in terms.items())
        print(f"{name}: wall {wall:.1f} s, bound terms {shown}; efficiency {eff:.3f}")
