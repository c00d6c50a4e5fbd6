"""A 6-shard experiment merged into a panel vs the same experiment recorded as one run.

Against the simulator (in this process, on 127.0.0.1, a fixed latency per response so that waiting
on a provider is part of the wall time, as it is live): the six personas on the bundled demo
dataset (16 questions) at n = ``SAMPLES``. The single run is one ``oracleproto run --record``
process; the sharded experiment is six ``run --record --shard I/6 --experiment ID`` processes
started together (one model each), then ``panel build``. Reported:

* every accuracy, consistency and probabilistic value of the panel's ``summary.json`` against the
  single run's analysis under the same settings (exact equality; ``panel_compare.py`` says which
  keys are not forecasts: the run id, the values derived from measured latency, the retries read
  from cassettes) — the benchmark fails
  (exit 1) on any difference;
* the cost difference: the calls actually paid (distinct cassette entries per channel, and their
  recorded provider cost) in the single run, where one search or detector call is shared by every
  model asking it, vs the sum over the six shards, which pay for their own;
* wall time: the six shards together, the panel build, and their ratio to the single run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.panel_compare import compare_summaries

SHARDS = 6
SAMPLES = int(os.environ.get("BENCH_PANEL_SAMPLES", "2"))
CHAT_LATENCY_MS = 60.0
SEARCH_LATENCY_MS = 30.0
ORACLEPROTO = str(Path(sys.executable).parent / "oracleproto")
_OURS = (
    "LEDGER_",
    "ORACLEPROTO_",
    "JOB_COMPLETION_INDEX",
    "MODELS",
    "LLM_",
    "TAVILY_",
    "LEAK_",
    "SAMPLING_N",
)


def _env_file(where: Path, base_url: str) -> Path:
    from oracleproto.sim.harness import SIM_LLM_KEY, SIM_MODELS

    values = {
        "LLM_BASE_URL": f"{base_url}/v1",
        "LLM_API_KEY": SIM_LLM_KEY,
        "MODELS": ",".join(slug for slug, _ in SIM_MODELS),
        "MODEL_TRAINING_CUTOFFS": ",".join(f"{slug}={cutoff}" for slug, cutoff in SIM_MODELS),
        "TAVILY_API_KEY": "sim-tavily-key-0001",
        "TAVILY_BASE_URL": base_url,
        "LEAK_DETECTOR_MODEL": "sim/detector",
        "LLM_SEND_SEED": "true",
        "SAMPLING_N": str(SAMPLES),
        "LLM_MAX_TOKENS": "800",
    }
    path = where / "run.env"
    path.write_text("".join(f"{k}={v}\n" for k, v in values.items()), encoding="utf-8")
    return path


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(_OURS)}


def _start(args: list[str], out: Path) -> subprocess.Popen[bytes]:
    with out.with_suffix(".out").open("wb") as stdout, out.with_suffix(".err").open("wb") as stderr:
        return subprocess.Popen([ORACLEPROTO, *args], env=_environ(), stdout=stdout, stderr=stderr)


def _finish(proc: subprocess.Popen[bytes], out: Path) -> Path:
    code = proc.wait(timeout=3600)
    stdout = out.with_suffix(".out").read_text(encoding="utf-8")
    if code != 0:
        raise SystemExit(f"{out.name}: exit {code}: {out.with_suffix('.err').read_text(encoding='utf-8')}")
    return Path(stdout.strip().splitlines()[-1])


def _record_args(env: Path, runs: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--record",
        "--env-file",
        str(env),
        "--runs-root",
        str(runs),
        "--no-progress",
        "--no-report",
        *extra,
    ]


def _paid(cassettes: Path) -> dict[str, tuple[int, float]]:
    """Distinct recorded calls per channel (each paid once) and their recorded provider cost."""
    from oracleproto.transport.stats import cassette_stats

    stats = cassette_stats(cassettes)
    return {name: (ch.entries, ch.cost) for name, ch in sorted(stats.channels.items())}


def _seal(run: Path) -> str:
    import hashlib

    return hashlib.sha256((run / "manifest.json").read_bytes()).hexdigest()


def measure(work: Path) -> int:
    """Record both ways, build the panel, compare; 0 when every value is equal."""
    from oracleproto.analysis import write_analysis
    from oracleproto.analysis.postrun import analyze_with_settings
    from oracleproto.panel.build import analysis_settings
    from oracleproto.panel.verify import load_panel, open_recorded_members
    from oracleproto.sim.faults import FaultConfig
    from oracleproto.sim.harness import SIM_MODELS
    from oracleproto.sim.server import SimConfig, Simulator

    config = SimConfig(
        seed=11,
        chat=FaultConfig(latency_ms=CHAT_LATENCY_MS),
        search=FaultConfig(latency_ms=SEARCH_LATENCY_MS),
    )
    with Simulator(config) as sim:
        env = _env_file(work, sim.base_url)
        experiment = subprocess.run(
            [ORACLEPROTO, "run", "--env-file", str(env), "--print-experiment-id"],
            env=_environ(), capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        start = time.perf_counter()
        single = _finish(_start(_record_args(env, work / "single"), work / "single"), work / "single")
        single_s = time.perf_counter() - start
        start = time.perf_counter()
        procs = [
            (_start(_record_args(env, work / f"s{i}", "--shard", f"{i}/{SHARDS}", "--experiment", experiment),
                    work / f"s{i}"), work / f"s{i}")
            for i in range(SHARDS)
        ]  # fmt: skip
        shards = [_finish(proc, out) for proc, out in procs]
        shards_s = time.perf_counter() - start
    spec = work / "PANEL.toml"
    # The panel lists the models in the single run's MODELS order, so its tables are in that order too.
    order = ", ".join(f'"{slug}"' for slug, _ in SIM_MODELS)
    spec.write_text(
        f"models = [{order}]\n"
        + "".join(f'[[member]]\npath = "{s}"\nsha256 = "{_seal(s)}"\n' for s in shards),
        encoding="utf-8",
    )
    start = time.perf_counter()
    panel = _finish(
        _start(["panel", "build", str(spec), "--out", str(work / "panel")], work / "build"), work / "build"
    )
    build_s = time.perf_counter() - start
    members, _ = open_recorded_members(panel, load_panel(panel), lambda _: None)
    out = work / "single-analysis"
    write_analysis(analyze_with_settings(single, analysis_settings(members)), out)
    single_summary = json.loads((out / "summary.json").read_bytes())
    panel_summary = json.loads((panel / "analysis" / "summary.json").read_bytes())
    comparison = compare_summaries(single_summary, panel_summary)
    models = len(panel_summary["models"])
    print(
        f"experiment: {models} models (one per shard) × 16 demo questions × n={SAMPLES}, simulator latency "
        f"{CHAT_LATENCY_MS:.0f} ms chat / {SEARCH_LATENCY_MS:.0f} ms search, {os.cpu_count()} CPUs"
    )
    verdict = "EQUAL" if comparison.equal else f"DIFFER ({len(comparison.differing)})"
    print(f"values (accuracy, consistency, probabilistic, counts): {comparison.compared} compared, {verdict}")
    for line in comparison.differing[:20]:
        print(f"  differs: {line}")
    print(
        f"per-model cost values in summary.json: {comparison.cost_compared} compared, "
        f"{len(comparison.cost_differing)} differ"
    )
    print(
        f"values derived from measured latency (mean latency, tool-use dependence fit): "
        f"{comparison.latency_compared} compared, {len(comparison.latency_differing)} differ "
        "(two recordings differ there; not a merge effect)"
    )
    single_paid = _paid(single / "cassettes")
    shard_paid: dict[str, list[float]] = {}
    for shard in shards:
        for channel, (entries, cost) in _paid(shard / "cassettes").items():
            total = shard_paid.setdefault(channel, [0, 0.0])
            total[0] += entries
            total[1] += cost
    print("calls paid (distinct recorded entries) and their provider cost, single run vs 6 shards:")
    for channel in sorted(set(single_paid) | set(shard_paid)):
        a_n, a_c = single_paid.get(channel, (0, 0.0))
        b_n, b_c = shard_paid.get(channel, [0, 0.0])
        print(
            f"  {channel:<9} {a_n:>6} vs {int(b_n):>6} calls (×{b_n / a_n if a_n else float('nan'):.2f}); "
            f"USD {a_c:.6f} vs {b_c:.6f} ({b_c - a_c:+.6f})"
        )
    print(
        f"wall: single run {single_s:.1f} s; 6 shards together {shards_s:.1f} s, panel build {build_s:.1f} s"
    )
    print(
        f"ratio (6 shards + panel build) / single run = {(shards_s + build_s) / single_s:.2f}; "
        f"6 shards alone / single run = {shards_s / single_s:.2f}"
    )
    return 0 if comparison.equal else 1


def main() -> int:
    """``python -m benchmarks panel_shards``."""
    keep = os.environ.get("BENCH_PANEL_DIR")
    if keep:
        work = Path(keep)
        work.mkdir(parents=True, exist_ok=True)
        return measure(work)
    with tempfile.TemporaryDirectory(prefix="bench-panel-") as tmp:
        return measure(Path(tmp))


if __name__ == "__main__":
    raise SystemExit(main())
