"""``make bench``: every target of the performance issue as one table of ratios.

Each ratio's baseline is measured in the same invocation, right next to the tool (see
``sizes``, ``record_overhead``, ``live``). The table ends with PASS or FAIL per row, and the
process exits 1 when any target is missed.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks import live, record_overhead, sizes

#: Runs of the record-overhead measurement; the row takes the median one (≈ 2.5 s each).
RECORD_REPEATS = 3
#: Replays from the index per size, each followed by a floor run: the time rows take the fastest
#: of each, the memory-growth row the median peak (one replay's process tree sometimes peaks tens
#: of MiB above the others, by timing alone, which would decide a growth taken over 28 MiB).
AGAIN_REPEATS = 3


@dataclass(frozen=True)
class Row:
    """One line of the table: a measured value against its baseline and target."""

    what: str
    tool: str
    baseline: str
    value: float
    target: float
    #: True when the value must stay at or below the target (a ratio); False: at or above.
    at_most: bool = True

    @property
    def ok(self) -> bool:
        """Whether the target holds."""
        return self.value <= self.target if self.at_most else self.value >= self.target


def _sizes(rows: list[Row], growth: list[str], tmp: Path) -> None:
    runs: dict[str, Path] = {}
    peaks: dict[str, list[tuple[float, float]]] = {"first": [], "again": []}
    for label, models in (("2x80x3", 2), ("6x80x3", 6)):
        run, rec = sizes.record(models, tmp / label)
        runs[label] = run
        cache = tmp / f"cache-{label}"
        # The first replay parses the YAML and builds the run's index; later ones are served from it.
        cold = sizes.replay(run, cache)
        reps, rep_floors = sizes.alternate(
            AGAIN_REPEATS,
            lambda r=run, c=cache: sizes.replay(r, c),
            lambda r=run: sizes.floor(r, for_verify=False),
        )
        rep = min(reps, key=lambda t: t.wall_s)
        rep_floor = min(rep_floors, key=lambda t: t.wall_s)
        again_peaks = sorted(t.peak_mib for t in reps)
        ver, ver_floor = sizes.best(
            2, lambda r=run: sizes.verify(r), lambda r=run: sizes.floor(r, for_verify=True)
        )
        mib = sizes.cassette_mib(run)
        peaks["first"].append((mib, cold.peak_mib))
        peaks["again"].append((mib, statistics.median(again_peaks)))
        growth.append(
            f"{label:>10}: cassettes {mib:7.1f} MiB; record {rec.wall_s:6.1f} s; replay {cold.wall_s:6.1f} s "
            f"(CPU {cold.cpu_s:.1f} s, peak {cold.peak_mib:4.0f} MiB), again {rep.wall_s:6.1f} s "
            f"(CPU {rep.cpu_s:.1f} s, peaks {'/'.join(f'{p:.0f}' for p in again_peaks)} MiB); "
            f"floor {rep_floor.wall_s:5.1f} s (CPU {rep_floor.cpu_s:.1f} s, {rep_floor.peak_mib:4.0f} MiB); "
            f"verify {ver.wall_s:5.1f} s, peak {ver.peak_mib:4.0f} MiB"
        )
        rows.append(
            Row(
                f"replay {label}, first (parses YAML, builds index)",
                f"{cold.wall_s:.1f} s",
                f"floor {rep_floor.wall_s:.1f} s",
                cold.wall_s / rep_floor.wall_s,
                2.0,
            )
        )
        rows.append(
            Row(
                f"replay {label}, again (from the index)",
                f"{rep.wall_s:.1f} s",
                f"floor {rep_floor.wall_s:.1f} s",
                rep.wall_s / rep_floor.wall_s,
                2.0,
            )
        )
        rows.append(
            Row(
                f"verify {label}",
                f"{ver.wall_s:.1f} s",
                f"floor {ver_floor.wall_s:.1f} s",
                ver.wall_s / ver_floor.wall_s,
                1.5,
            )
        )
    for which, points in peaks.items():
        (small_mib, small_peak), (large_mib, large_peak) = points
        rows.append(
            Row(
                f"replay memory growth, {which} (MiB RSS per MiB of cassettes)",
                f"+{large_peak - small_peak:.0f} MiB",
                f"+{large_mib - small_mib:.0f} MiB YAML",
                (large_peak - small_peak) / (large_mib - small_mib),
                1.0,
            )
        )
    synth = tmp / "30x300x3"
    start = time.perf_counter()
    scale = sizes.synthesize(runs["6x80x3"], synth)
    made = time.perf_counter() - start
    shutil.rmtree(tmp / "2x80x3", ignore_errors=True)
    load, load_floor = sizes.best(
        1, lambda: sizes.synthetic_load(synth), lambda: sizes.synthetic_floor(synth)
    )
    mib = sizes.cassette_mib(synth)
    growth.append(
        f"{'30x300x3':>10}: cassettes {mib:7.1f} MiB (synthetic, x{scale:.2f} of 6x80x3, "
        f"made in {made:.0f} s); "
        f"cassette stage {load.wall_s:6.1f} s (CPU {load.cpu_s:.1f} s), peak {load.peak_mib:6.0f} MiB "
        f"(floor {load_floor.wall_s:5.1f} s, CPU {load_floor.cpu_s:.1f} s, {load_floor.peak_mib:4.0f} MiB)"
    )
    rows.append(
        Row(
            "replay 30x300x3 (synthetic: cassette stage)",
            f"{load.wall_s:.1f} s",
            f"floor {load_floor.wall_s:.1f} s",
            load.wall_s / load_floor.wall_s,
            2.0,
        )
    )
    rows.append(
        Row(
            "replay memory: peak RSS / cassette bytes, 30x300x3",
            f"{load.peak_mib:.0f} MiB",
            f"{mib:.0f} MiB of YAML",
            load.peak_mib / mib,
            1.0,
        )
    )


def _record(rows: list[Row]) -> None:
    (base, rec, overhead), every = record_overhead.measure_median(RECORD_REPEATS)
    print(f"record overhead of each run (ms/request): {', '.join(f'{o:.3f}' for o in every)}")
    rows.append(
        Row(
            f"record overhead, 4-48 KB bodies, fold amortised (ms/request, median of {RECORD_REPEATS})",
            f"{rec:.2f} ms",
            f"plain httpx {base:.2f} ms",
            overhead,
            1.0,
        )
    )


def _live(rows: list[Row]) -> None:
    for name, caps in (("default caps", None), ("tuned caps", live.TUNED)):
        eff, wall, terms = live.efficiency(caps)
        ideal = max(terms.values())
        rows.append(
            Row(
                f"live efficiency, {name}, log-normal latency + 429s",
                f"wall {wall:.1f} s",
                f"ideal {ideal:.1f} s",
                eff,
                0.95,
                at_most=False,
            )
        )


def _print(rows: list[Row], growth: list[str], elapsed: float) -> None:
    width = max(len(r.what) for r in rows)
    print()
    print(
        f"{'measure'.ljust(width)}  {'tool':>10}  {'baseline (same run)':>22}  {'ratio':>7}  target   verdict"
    )
    for r in rows:
        target = f"{'<=' if r.at_most else '>='} {r.target:g}"
        verdict = "PASS" if r.ok else "FAIL"
        print(
            f"{r.what.ljust(width)}  {r.tool:>10}  {r.baseline:>22}  {r.value:7.3f}  {target:<7}  {verdict}"
        )
    print("\ngrowth (time and peak memory per size):")
    for line in growth:
        print(line)
    print(f"\nbench took {elapsed / 60:.1f} min")


def main() -> int:
    """Measure every target, print the table; 1 when a target is missed."""
    if not sizes.SHARED_DB.is_file():
        print(f"FAIL: {sizes.SHARED_DB} not found (the shared data must sit beside the repository)")
        return 1
    started = time.perf_counter()
    rows: list[Row] = []
    growth: list[str] = []
    steps: list[tuple[str, Callable[[], None]]] = [
        ("record overhead", lambda: _record(rows)),
        ("live efficiency", lambda: _live(rows)),
    ]
    with tempfile.TemporaryDirectory(prefix="oracleproto-bench-") as tmp:
        steps.insert(0, ("run sizes", lambda: _sizes(rows, growth, Path(tmp))))
        for name, step in steps:
            print(f"== {name}", flush=True)
            step()
    _print(rows, growth, time.perf_counter() - started)
    missed = [r.what for r in rows if not r.ok]
    if missed:
        print(f"\nFAILED: {len(missed)} of {len(rows)} targets missed: " + "; ".join(missed))
        return 1
    print(f"\nall {len(rows)} targets met")
    return 0
