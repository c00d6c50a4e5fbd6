"""Every ``make bench`` row can fail (issue 32): a regression injected into a copy trips it.

Each test measures a row on a small recording twice — the clean package and a copy with the
regression the row's docs name (docs/design/performance.md, "The target table") — and shows that the row's
value moves by about the injected cost and that the row then fails. The replay and verify rows run
the tool and its floor as child processes, exactly as ``make bench`` does (``benchmarks.inject``
points them at the copy), and so does the loader row's measurement; the record row runs in this
process and is patched here.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import inject, live, loader, record_overhead, sizes, targets
from oracleproto.dataset.demo import demo_db_path

pytestmark = pytest.mark.slow

#: The small recordings are served from the index too (it is otherwise only built from 8 MiB up).
_INDEX_ALWAYS = (
    "transport/replay_index.py",
    "REPLAY_INDEX_MIN_BYTES = 8 << 20",
    "REPLAY_INDEX_MIN_BYTES = 0",
)
#: A fortyfold parse of every cassette file the replay (or verify) streams: "parsing twice", magnified
#: until it stands well clear of the noise a loaded machine adds to the clean side.
_PARSE_AGAIN = (
    "transport/entry_stream.py",
    "    seen: dict[str, int] = {}\n",
    "    for _ in range(40):\n        load_untrusted(data)\n    seen: dict[str, int] = {}\n",
)
#: 5 ms of CPU per entry read from the index (a slow decoder in the hot path).
_SLOW_INDEX = (
    "transport/index.py",
    '        line = self._cache.get(f"entry:{key}")\n',
    f'        {inject.BURN.format(ms=5)}\n        line = self._cache.get(f"entry:{{key}}")\n',
)
#: 300 MiB held by every process that reads a cassette (a whole-run copy kept in memory).
_BALLAST = (
    "transport/entry_stream.py",
    "    seen: dict[str, int] = {}\n",
    "    import sys as _sys\n"
    "    if not hasattr(_sys, '_ballast'):\n"
    "        _sys._ballast = b'x' * (300 << 20)\n"
    "    seen: dict[str, int] = {}\n",
)
#: The cassette loader gives way to libyaml's composer (its node graph), as before the event loader.
_COMPOSER = (
    "transport/safe_yaml.py",
    "        return loader.load_document(max_entry_chars, on_item)\n",
    "        return yaml.load(data, Loader=yaml.CSafeLoader)\n",
)
#: verify re-parses every cassette file forty times.
_VERIFY_AGAIN = (
    "verify/cassettes.py",
    "        entries = parse_entries(data, label)\n",
    "        entries = parse_entries(data, label)\n"
    "        for _ in range(40):\n            parse_entries(data, label)\n",
)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One simulated model on the demo dataset, one sample per question (≈ 2 MB of cassettes).

    Recorded without its analysis pass: the regressions these tests inject are in reading the
    cassettes and the index, and an analysis (tables, plots drawn by a replay's worker) would only
    add the same seconds to the clean and the regressed sides of every measurement.
    """
    root = tmp_path_factory.mktemp("small-run")
    args = [
        "sim",
        "run",
        "--dataset",
        "demo",
        "--personas",
        "1",
        "--samples",
        "1",
        "--no-progress",
        "--no-report",
    ]
    sizes.run_child([*sizes.CLI, *args, "--runs-root", str(root)])
    (run,) = [p for p in root.iterdir() if p.is_dir()]
    return run


@pytest.fixture
def copies(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


def _row(kind: str, run: Path, cache: Path, copy: Path, pairs: int) -> tuple[targets.Row, sizes.Timed]:
    with inject.children_use(copy):
        tool, floor = targets.measure(kind, run, demo_db_path(), cache, pairs)
    if kind == "first":
        return targets.time_row("first", tool, floor, targets.FIRST_TARGET), tool
    if kind == "index":
        return targets.time_row("index", tool, floor, targets.INDEX_TARGET), tool
    return targets.time_row("verify", tool, floor, targets.VERIFY_TARGET), tool


def _clean_and_regressed(
    kind: str, run: Path, root: Path, regression: inject.Patch
) -> tuple[targets.Row, sizes.Timed, targets.Row, sizes.Timed]:
    """The row on the clean copy and on the regressed one, with each one's tool timing.

    The floors here take a fraction of a second, so their noise moves a ratio by whole units: the
    tests compare the tools' CPU (what the regression adds) in floors, and the regressed row's verdict.
    A loaded machine only adds CPU time (cache and core contention): to the regressed side that
    widens the difference, to the clean side and its floor it narrows it, so those two take the
    least of two measurements, as ``make bench`` does.
    """
    clean = inject.patched_copy(root / "clean", [_INDEX_ALWAYS])
    regressed = inject.patched_copy(root / "regressed", [_INDEX_ALWAYS, regression])
    clean_row, clean_tool = _row(kind, run, root / "cache-clean", clean, pairs=2)
    if kind == "index":
        # The regressed copy writes the same index (its regressions only read): it is served the
        # clean copy's rather than build it with a slow reader, a replay's CPU for nothing.
        shutil.copytree(root / "cache-clean", root / "cache-regressed")
    bad_row, bad_tool = _row(kind, run, root / "cache-regressed", regressed, pairs=1)
    return clean_row, clean_tool, bad_row, bad_tool


def _floor_cpu(row: targets.Row, tool: sizes.Timed) -> float:
    return tool.cpu_s / row.value


def test_a_patch_that_no_longer_applies_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="anchor found 0 times"):
        inject.patched_copy(tmp_path, [("transport/index.py", "no such text", "")])


def test_replay_first_row_fails_when_the_cassettes_are_parsed_again(small_run: Path, copies: Path) -> None:
    clean, clean_tool, bad, bad_tool = _clean_and_regressed("first", small_run, copies, _PARSE_AGAIN)
    # Forty more parses cost many floors (the floor is one parse plus the rows).
    assert bad_tool.cpu_s - clean_tool.cpu_s > 5 * _floor_cpu(clean, clean_tool)
    assert not bad.ok


def test_replay_from_index_row_fails_when_reading_an_entry_costs_more(small_run: Path, copies: Path) -> None:
    clean, clean_tool, bad, bad_tool = _clean_and_regressed("index", small_run, copies, _SLOW_INDEX)
    # ≈ 380 entries × 5 ms ≈ 1.9 CPU-s added; the clean side's noise under load is a fraction of that.
    assert bad_tool.cpu_s - clean_tool.cpu_s > 0.5
    assert bad_tool.cpu_s - clean_tool.cpu_s > 2 * _floor_cpu(clean, clean_tool)
    assert not bad.ok


def test_verify_row_fails_when_verify_parses_again(small_run: Path, copies: Path) -> None:
    clean, clean_tool, bad, bad_tool = _clean_and_regressed("verify", small_run, copies, _VERIFY_AGAIN)
    assert bad_tool.cpu_s - clean_tool.cpu_s > 5 * _floor_cpu(clean, clean_tool)
    assert not bad.ok


def test_memory_row_fails_when_the_replay_holds_a_copy(small_run: Path, copies: Path) -> None:
    clean_copy = inject.patched_copy(copies / "clean", [_INDEX_ALWAYS])
    bad_copy = inject.patched_copy(copies / "regressed", [_INDEX_ALWAYS, _BALLAST])
    with inject.children_use(clean_copy):
        clean_tool, clean_floor = targets.measure("first", small_run, demo_db_path(), copies / "c1")
    with inject.children_use(bad_copy):
        bad_tool, bad_floor = targets.measure("first", small_run, demo_db_path(), copies / "c2")
    clean = targets.memory_row("first", clean_tool, clean_floor)
    bad = targets.memory_row("first", bad_tool, bad_floor)
    # A peak is the largest single process's (``ru_maxrss``): the 300 MiB go onto the process holding
    # them, which may be up to ~100 MiB smaller than the clean run's largest (a full run once measured
    # +244 MiB).
    assert bad_tool.peak_mib - clean_tool.peak_mib > 200
    assert (
        bad_floor.peak_mib < clean_floor.peak_mib + 50
    )  # the floor reads no cassette through stream_entries
    assert bad.value > clean.value + 5 and not bad.ok


def test_loader_row_fails_with_the_composer_back(copies: Path) -> None:
    safe, plain, _ = loader.loader_cpu(1_000)
    clean = targets.Row("loader", "", "", safe / plain, targets.LOADER_TARGET)
    with inject.children_use(inject.patched_copy(copies / "composer", [_COMPOSER])):
        safe, plain, _ = loader.loader_cpu(1_000)
    bad = targets.Row("loader", "", "", safe / plain, targets.LOADER_TARGET)
    assert bad.value > clean.value + 0.3 and not bad.ok


def test_record_overhead_row_fails_with_four_more_ms_per_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    from oracleproto.transport import live_entry

    monkeypatch.setattr(record_overhead, "N_REQUESTS", 60)
    clean = record_overhead.measure()
    original = live_entry.redact_entry

    def slow(entry: object, secrets: set[str]) -> object:
        inject.burn(4.0)
        return original(entry, secrets)  # type: ignore[arg-type]

    monkeypatch.setattr(live_entry, "redact_entry", slow)
    bad = record_overhead.measure()
    # The two measurements differ by up to half a millisecond on a loaded machine: 4 ms stands clear.
    assert bad.overhead_cpu_ms - clean.overhead_cpu_ms > 3.0
    assert not targets.Row("record", "", "", bad.overhead_cpu_ms, targets.RECORD_TARGET_MS).ok


def test_live_bound_counts_only_successful_attempts() -> None:
    attempts = [
        {"attempt": 0, "status": 429, "latency_ms": 900},
        {"attempt": 1, "status": 503, "latency_ms": 700},
        {"attempt": 2, "status": None, "latency_ms": 500},  # a transport exception
        {"attempt": 3, "status": 200, "latency_ms": 250},
    ]
    assert live.successful_s(attempts) == 0.25
    assert live.successful_s([{"attempt": 0, "status": 200, "latency_ms": None}]) == 0.0


def test_live_efficiency_row_fails_with_a_wait_in_the_request_path(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from oracleproto.transport.recorder import RecordReplay

    # Four questions: the row's own run waits on the simulator's latency for most of its time.
    small = live.LiveRun(
        fail_429=0.0, fail_5xx=0.0, source_db=demo_db_path(), models=1, samples=1, question_limit=4
    )
    original = RecordReplay.handle_async

    async def waits(self: RecordReplay, channel: str, request: object) -> object:
        await asyncio.sleep(0.5)  # outside the attempt the provider times: the ideal bound is unchanged
        return await original(self, channel, request)  # type: ignore[arg-type]

    with monkeypatch.context() as patched:
        patched.setattr(RecordReplay, "handle_async", waits)
        bad, _, _ = live.efficiency(None, small)
    # A ratio, not a difference: the waits (half a second per request, 2.5 times the simulator's
    # median latency, and far above a loaded request's own time) divide the efficiency. A machine
    # busy with other work only lowers it: a clean run starved of CPU once measured 0.17 against
    # the waiting run's 0.24 (0.66 against 0.26 when quiet). So the clean side is the best of up
    # to three runs; the waiting side is measured once, since load can only lower it further.
    cleans = [live.efficiency(None, small)[0]]
    while bad >= max(cleans) * 0.7 and len(cleans) < 3:
        cleans.append(live.efficiency(None, small)[0])
    assert bad < max(cleans) * 0.7, (bad, cleans)
    assert not targets.Row("live", "", "", bad, targets.LIVE_TARGET, at_most=False).ok
