"""``make bench``: every performance target as one table, each row against a baseline of the same run.

Rows (what each divides by, and what regression trips it, is in docs/design/performance.md,
"The target table"):

* per run size (2×80×3 and 6×80×3 from the shared set, 30×300×3 from a generated 300-question set;
  each recorded once by the simulator and kept, ``benchmarks.runs``): the first replay over the
  replay floor, a replay from the index over the index floor, ``verify`` over the verify floor
  (``benchmarks.floor``), by CPU time of the whole process tree (targets 1.5, 1.3, 1.5; wall
  ratios printed beside them), and each one's peak RSS over its floor's peak (target 1.5);
* the cassette loader over libyaml's ``CSafeLoader`` (CPU), which keeps the floors' parser honest;
* record overhead per request with a realistic bearer key and a Tavily key (CPU and wall, ms);
* live efficiency with real waits, default and tuned caps.

Every row prints the tool's measure, the baseline's, both ratios and the target; the process exits
1 when a row misses. ``BENCH_SIZES=2x80x3,6x80x3`` limits the sizes, ``BENCH_ONLY=sizes,loader,
record,live`` the groups (development; the table of record is the full one).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks import live, record_overhead, runs, sizes
from benchmarks.sizes import Timed

#: Run sizes (models, questions) and tool/floor pairs alternated at each: the rows take the least
#: CPU of each side (a shared machine only adds time). The 30 × 300 × 3 run is measured once.
SIZES: dict[str, tuple[int, int, int]] = {
    "2x80x3": (2, 80, 2),
    "6x80x3": (6, 80, 2),
    "30x300x3": (30, 300, 1),
}
#: CPU-time targets (tool / floor) and the peak-memory target (tool peak / floor peak).
FIRST_TARGET, INDEX_TARGET, VERIFY_TARGET, MEMORY_TARGET = 1.5, 1.3, 1.5, 1.5
#: The cassette loader must stay well under libyaml's composer (it measures about 0.3).
LOADER_TARGET = 0.6
RECORD_TARGET_MS = 1.0
LIVE_TARGET = 0.9
RECORD_REPEATS = 3


@dataclass(frozen=True)
class Row:
    """One line of the table: the tool's measure against its baseline, both ratios, the target."""

    what: str
    tool: str
    baseline: str
    #: The number judged against ``target`` (a CPU ratio, a peak ratio, milliseconds, an efficiency).
    value: float
    target: float
    #: The wall-time ratio printed beside a CPU ratio (None when the row has no second basis).
    wall: float | None = None
    #: True when the value must stay at or below the target; False: at or above.
    at_most: bool = True
    #: What ``value`` is: "CPU" ratio, "RSS" ratio, or another unit.
    basis: str = "CPU"

    @property
    def ok(self) -> bool:
        """Whether the target holds."""
        return self.value <= self.target if self.at_most else self.value >= self.target


def _timed(t: Timed) -> str:
    return f"{t.wall_s:.1f}/{t.cpu_s:.1f} s"


def time_row(what: str, tool: Timed, base: Timed, target: float) -> Row:
    """A CPU-time ratio row (the wall ratio printed beside it)."""
    return Row(
        what, _timed(tool), _timed(base), tool.cpu_s / base.cpu_s, target, wall=tool.wall_s / base.wall_s
    )


def memory_row(what: str, tool: Timed, base: Timed) -> Row:
    """Peak RSS of the tool's process tree over the floor's."""
    return Row(
        what,
        f"{tool.peak_mib:.0f} MiB",
        f"{base.peak_mib:.0f} MiB",
        tool.peak_mib / base.peak_mib,
        MEMORY_TARGET,
        basis="RSS",
    )


def measure(kind: str, run: Path, dataset: Path, cache: Path, pairs: int = 1) -> tuple[Timed, Timed]:
    """The tool and its floor for one row kind: ``first`` (a replay that parses the YAML and builds
    the index), ``index`` (a replay served from the index) or ``verify``; the least CPU of each."""
    if kind == "first":

        def first() -> Timed:
            shutil.rmtree(cache, ignore_errors=True)  # a first replay: it parses the YAML, builds the index
            return sizes.replay(run, cache, dataset)

        return sizes.best(pairs, first, lambda: sizes.floor(run, "replay"))
    if kind == "index":
        index = sizes.index_dir(run, cache)
        if not index.is_dir():
            sizes.replay(run, cache, dataset)  # builds the index the timed replays are served from
        return sizes.best(
            pairs, lambda: sizes.replay(run, cache, dataset), lambda: sizes.floor(run, "index", index)
        )
    if kind == "verify":
        return sizes.best(pairs, lambda: sizes.verify(run, dataset), lambda: sizes.floor(run, "verify"))
    raise ValueError(f"unknown row kind {kind!r}")


def size_rows(label: str, run: Path, dataset: Path, cache: Path, pairs: int) -> tuple[list[Row], str]:
    """The six rows of one run size, and its line of absolute figures."""
    cold, cold_floor = measure("first", run, dataset, cache, pairs)
    again, again_floor = measure("index", run, dataset, cache, pairs)
    ver, ver_floor = measure("verify", run, dataset, cache, pairs)
    rows = [
        time_row(f"replay {label}, first (YAML) / replay floor", cold, cold_floor, FIRST_TARGET),
        time_row(f"replay {label}, from index / index floor", again, again_floor, INDEX_TARGET),
        time_row(f"verify {label} / verify floor", ver, ver_floor, VERIFY_TARGET),
        memory_row(f"peak RSS replay {label}, first / floor", cold, cold_floor),
        memory_row(f"peak RSS replay {label}, from index / floor", again, again_floor),
        memory_row(f"peak RSS verify {label} / floor", ver, ver_floor),
    ]
    line = (
        f"{label:>9}: cassettes {sizes.cassette_mib(run):7.1f} MiB; replay first {_timed(cold)} "
        f"{cold.peak_mib:.0f} MiB, from index {_timed(again)} {again.peak_mib:.0f} MiB, verify "
        f"{_timed(ver)} {ver.peak_mib:.0f} MiB; floors {_timed(cold_floor)} {cold_floor.peak_mib:.0f} MiB, "
        f"{_timed(again_floor)} {again_floor.peak_mib:.0f} MiB, {_timed(ver_floor)} "
        f"{ver_floor.peak_mib:.0f} MiB (wall/CPU)"
    )
    return rows, line


def _sizes(rows: list[Row], growth: list[str], tmp: Path) -> None:
    wanted = os.environ.get("BENCH_SIZES", ",".join(SIZES)).split(",")
    for label in wanted:
        models, questions, pairs = SIZES[label]
        print(f"-- {label}: recording (or reusing the kept recording)", flush=True)
        run, rec, new = runs.recorded(models, questions)
        made = "recorded now" if new else "kept recording, recorded"
        if runs.was_resumed(run):
            made += " (resumed: the last session's time only)"
        growth.append(f"{label:>9}: {made} in {_timed(rec)} (wall/CPU), peak {rec.peak_mib:.0f} MiB")
        print(f"-- {label}: replay, verify and floors", flush=True)
        found, line = size_rows(label, run, runs.dataset_of(run), tmp / f"cache-{label}", pairs)
        rows.extend(found)
        growth.append(line)
        shutil.rmtree(tmp / f"cache-{label}", ignore_errors=True)


def _loader(rows: list[Row]) -> None:
    from benchmarks.loader import loader_cpu

    safe, plain, mb = loader_cpu()
    rows.append(
        Row(
            f"cassette loader / CSafeLoader ({mb:.1f} MB)",
            f"{safe:.2f} s",
            f"{plain:.2f} s",
            safe / plain,
            LOADER_TARGET,
        )
    )


def _record(rows: list[Row]) -> None:
    median, every = record_overhead.measure_median(RECORD_REPEATS)
    print(
        "record overhead of each run (CPU/wall ms per request): "
        + ", ".join(f"{m.overhead_cpu_ms:.3f}/{m.overhead_wall_ms:.3f}" for m in every)
    )
    rows.append(
        Row(
            f"record overhead, 164-char bearer + Tavily key, 4-48 KB, fold in (median of {RECORD_REPEATS})",
            f"{median.rec_cpu_ms:.2f}/{median.rec_wall_ms:.2f} ms",
            f"httpx {median.base_cpu_ms:.2f}/{median.base_wall_ms:.2f} ms",
            median.overhead_cpu_ms,
            RECORD_TARGET_MS,
            wall=median.overhead_wall_ms,
            basis="ms CPU",
        )
    )


def _live(rows: list[Row]) -> None:
    for name, caps in (("default caps", None), ("tuned caps", live.TUNED)):
        eff, wall, terms = live.efficiency(caps)
        ideal = max(terms.values())
        print(f"live {name}: wall {wall:.1f} s; " + ", ".join(f"{k} {v:.1f} s" for k, v in terms.items()))
        rows.append(
            Row(
                f"live efficiency, {name} (log-normal, 429 + Retry-After 1-5 s, 5xx)",
                f"wall {wall:.1f} s",
                f"ideal {ideal:.1f} s",
                eff,
                LIVE_TARGET,
                at_most=False,
                basis="eff",
            )
        )


def render(rows: list[Row]) -> str:
    """The table: measure, tool and baseline (wall/CPU), wall ratio, judged value, target, verdict."""
    width = max(len(r.what) for r in rows)
    lines = [
        f"{'measure'.ljust(width)}  {'tool':>16}  {'baseline (same run)':>22}  {'wall x':>7}  "
        f"{'judged':>7}  {'on':<6}  target   verdict"
    ]
    for r in rows:
        target = f"{'<=' if r.at_most else '>='} {r.target:g}"
        wall = "" if r.wall is None else f"{r.wall:.3f}"
        lines.append(
            f"{r.what.ljust(width)}  {r.tool:>16}  {r.baseline:>22}  {wall:>7}  {r.value:7.3f}  "
            f"{r.basis:<6}  {target:<7}  {'PASS' if r.ok else 'FAIL'}"
        )
    return "\n".join(lines)


def main() -> int:
    """Measure every target, print the table; 1 when a target is missed."""
    if not sizes.SHARED_DB.is_file():
        print(f"FAIL: {sizes.SHARED_DB} not found (the shared data must sit beside the repository)")
        return 1
    started = time.perf_counter()
    rows: list[Row] = []
    growth: list[str] = []
    only = os.environ.get("BENCH_ONLY", "sizes,loader,record,live").split(",")
    with tempfile.TemporaryDirectory(prefix="oracleproto-bench-") as tmp:
        steps: list[tuple[str, Callable[[], None]]] = [
            ("sizes", lambda: _sizes(rows, growth, Path(tmp))),
            ("loader", lambda: _loader(rows)),
            ("record", lambda: _record(rows)),
            ("live", lambda: _live(rows)),
        ]
        for name, step in steps:
            if name in only:
                print(f"== {name}", flush=True)
                step()
    print()
    print(render(rows))
    print("\nabsolute figures per size:")
    for line in growth:
        print(line)
    print(f"\nbench took {(time.perf_counter() - started) / 60:.1f} min")
    missed = [r.what for r in rows if not r.ok]
    if missed:
        print(f"\nFAILED: {len(missed)} of {len(rows)} targets missed: " + "; ".join(missed))
        return 1
    print(f"\nall {len(rows)} targets met")
    return 0
