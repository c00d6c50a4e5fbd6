"""The fault matrix: every provider fault, recorded against the simulator, replays byte for byte.

Each scenario records a small run (1 model, yes/no questions, n = 2) in process against a
simulator injecting one kind of fault on the chat endpoint (main LLM and detector) and on
search, writes the analysis, then replays it through the real replay path (``replay_run``) and
requires every DB's logical dump, every analysis file and the manifest to be equal. The
recording clock is fake (backoffs and ``Retry-After`` waits cost nothing) but moves 1 ms at
every reading, so a latency or timestamp taken from the clock instead of the recording cannot
agree by accident; the replay clock starts years later for the same reason. Concurrency is
real: samples of one question send the same first search at once, so a retried search or
detector call is waited on by the others (``waited`` in the traffic counts it).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from oracleproto.agent.result import SKIPPED_TRAINING_CUTOFF
from oracleproto.analysis import analyze_run
from oracleproto.analysis.writer import write_analysis
from oracleproto.cli.run import write_run_analysis
from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import AuthError
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.replay import replay_run
from oracleproto.settings.model import Settings
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.harness import SIM_LLM_KEY, SIM_TAVILY_KEY, SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store import RunDir, parse_timestamp
from oracleproto.store.sample_entries import read_sample_keys
from oracleproto.transport import CassetteStore
from oracleproto.transport.entry import Entry

RUN_ID = "20260101-000000-fa17"
Slots = dict[tuple[str, str, int], dict[str, Any]]
#: Client timeout of the timeout scenarios; the simulator holds those requests 4× as long.
SHORT_TIMEOUT_S = 0.25


class SteppingClock(FakeClock):
    """A fake clock that also moves 1 ms at every reading (sleeps still cost no wall time)."""

    def now(self) -> datetime:
        """The fake time, one tick later."""
        self.advance(0.001)
        return super().now()

    def monotonic(self) -> float:
        """The fake monotonic time, one tick later."""
        self.advance(0.001)
        return super().monotonic()


@dataclass(frozen=True)
class Scenario:
    """One row of the matrix: the faults of the first session, and of a resume if there is one."""

    faults: FaultConfig
    #: Faults of the chat and search endpoints of the resumed session (None: no resume).
    resume: tuple[FaultConfig, FaultConfig] | None = None
    #: Search faults when they differ from ``faults`` (the revoked-key scenarios).
    search: FaultConfig | None = None
    short_timeouts: bool = False
    #: Render the plots too (slow: matplotlib dominates a small run's time, so one row does it).
    plots: bool = False


#: Draws are keyed on request content, so a rate too low can leave a kind out of a small run
#: altogether (4 % timeouts drew none once the tool message changed); ``check_injected`` catches that.
MIX = FaultConfig(
    fail_5xx=0.05,
    fail_429=0.05,
    fail_timeout=0.06,
    fail_reset=0.04,
    fail_reset_mid_body=0.04,
    fail_truncated=0.04,
    fail_malformed=0.04,
    retry_after_s=1,
    timeout_mode="hang",
    hang_s=4 * SHORT_TIMEOUT_S,
)
LIGHT = FaultConfig(fail_5xx=0.1)

SCENARIOS: dict[str, Scenario] = {
    "5xx": Scenario(FaultConfig(fail_5xx=0.3)),
    "429-retry-after": Scenario(FaultConfig(fail_429=0.3, retry_after_s=2)),
    "429-no-retry-after": Scenario(FaultConfig(fail_429=0.3, retry_after_s=None)),
    "timeout": Scenario(
        FaultConfig(fail_timeout=0.2, timeout_mode="hang", hang_s=4 * SHORT_TIMEOUT_S), short_timeouts=True
    ),
    "reset-before-response": Scenario(FaultConfig(fail_reset=0.3)),
    "reset-mid-body": Scenario(FaultConfig(fail_reset_mid_body=0.3)),
    "malformed-json": Scenario(FaultConfig(fail_malformed=0.2)),
    # Every LLM call fails: no sample has a single successful LLM call.
    "llm-outage": Scenario(FaultConfig(fail_5xx=1.0), search=FaultConfig()),
    "truncated-body": Scenario(FaultConfig(fail_truncated=0.3)),
    "mix": Scenario(MIX, short_timeouts=True, plots=True),
    # A key revoked mid-run: the run aborts resumably, and a resume against a provider that
    # accepts the key again completes it. Such a session sends ~100 chat requests (LLM and
    # detector; the LLM revocation at the 90th leaves some samples done before it) and 10 live
    # searches.
    "revoked-llm-key-then-resume": Scenario(
        replace(LIGHT, revoked_keys=frozenset({SIM_LLM_KEY}), revoked_after=90),
        search=LIGHT,
        resume=(LIGHT, LIGHT),
    ),
    "revoked-tavily-key-then-resume": Scenario(
        LIGHT,
        search=replace(LIGHT, revoked_keys=frozenset({SIM_TAVILY_KEY}), revoked_after=6),
        resume=(LIGHT, LIGHT),
    ),
}


@dataclass
class Recording:
    """A recorded scenario: its run directory, each session's summary and the recording clock."""

    run: RunDir
    sessions: list[RunSummary]
    clock: SteppingClock
    aborted: AuthError | None = None


def _settings(sim: Simulator, runs_root: Path, scenario: Scenario) -> Settings:
    settings = simulated_settings(sim, SimRunSpec(models=1, samples=2, runs_root=runs_root))
    # One retry per call, so faults often exhaust a call: failed samples, failed searches and
    # failed verdicts — the paths whose timing used to come from the clock — occur in every row.
    per_call = {"retry_max": 1}
    if scenario.short_timeouts:
        per_call["timeout_s"] = SHORT_TIMEOUT_S
    update: dict[str, object] = {
        section: getattr(settings, section).model_copy(update=per_call)
        for section in ("llm", "search", "detector")
    }
    update["run"] = settings.run.model_copy(update={"question_types": ["yes_no"]})
    return settings.model_copy(update=update)


def analysis_without_plots(run: RunDir, settings: Settings, _plots: object = None) -> None:
    """The post-run analysis pass minus the plots (every table and ``summary.json``); a replay's
    pass is also told who draws the plots (none here)."""
    options = settings.analysis
    result = analyze_run(
        run.root, options.convention, bootstrap_samples=options.bootstrap_samples, seed=options.seed
    )
    write_analysis(result, run.analysis_dir, plots=False)


def _analysis(scenario: Scenario) -> Callable[..., None]:
    return write_run_analysis if scenario.plots else analysis_without_plots


def _session(
    runs_root: Path, scenario: Scenario, chat: FaultConfig, search: FaultConfig, clock: SteppingClock
) -> RunSummary:
    with Simulator(SimConfig(seed=0, chat=chat, search=search)) as sim:
        options = RunOptions(
            settings=_settings(sim, runs_root, scenario),
            source_db=demo_db_path(),
            runs_root=runs_root,
            mode="record",
            run_id=RUN_ID,
            progress=False,
            after=_analysis(scenario),
        )
        return asyncio.run(execute_run(options, clock=clock, rand=random.Random(0)))


def record(runs_root: Path, scenario: Scenario) -> Recording:
    """Record a scenario (and its resume) with a stepping fake clock."""
    clock = SteppingClock()
    search = scenario.search or scenario.faults
    if scenario.resume is None:
        summary = _session(runs_root, scenario, scenario.faults, search, clock)
        return Recording(summary.run, [summary], clock)
    with pytest.raises(AuthError, match="resumable") as aborted:
        _session(runs_root, scenario, scenario.faults, search, clock)
    summary = _session(runs_root, scenario, *scenario.resume, clock)
    return Recording(summary.run, [summary], clock, aborted.value)


def attempt_outcomes(run: RunDir) -> Counter[str]:
    """Every recorded attempt, per channel: ``llm:200``, ``search:503``, ``detector:ReadTimeout``…"""
    outcomes: Counter[str] = Counter()
    for entry in CassetteStore(run.cassettes_dir, writable=False).effective_entries():
        for attempt in entry.attempts:
            outcomes[f"{entry.channel}:{attempt['exception'] or attempt['status']}"] += 1
    return outcomes


def _not_json(entry: Entry) -> bool:
    try:
        json.loads(entry.body)
    except ValueError:
        return True
    return False


def check_injected(name: str, recording: Recording, slots: Slots) -> None:
    """The scenario's fault really reached the recording (the matrix cannot pass vacuously)."""
    outcomes = attempt_outcomes(recording.run)
    kinds = {key.split(":", 1)[1] for key in outcomes}
    entries = CassetteStore(recording.run.cassettes_dir, writable=False).effective_entries()
    expected = {
        "5xx": {"500", "502", "503"},
        "429-retry-after": {"429"},
        "429-no-retry-after": {"429"},
        "timeout": {"ReadTimeout"},
        "reset-before-response": {"ReadError"},
        "reset-mid-body": {"ReadError"},
        "truncated-body": {"RemoteProtocolError"},
        "llm-outage": {"500", "502", "503"},
        "revoked-llm-key-then-resume": {"500", "502", "503"},
        "revoked-tavily-key-then-resume": {"500", "502", "503"},
    }
    if name == "mix":
        assert {"429", "ReadTimeout", "ReadError", "RemoteProtocolError"} <= kinds, outcomes
        assert kinds & {"500", "502", "503"}, outcomes
    elif name == "malformed-json":
        assert any(e.status == 200 and _not_json(e) for e in entries), outcomes
    else:
        assert kinds & expected[name], outcomes
    sleeps = set(recording.clock.sleeps)
    if name == "429-retry-after":
        assert 2.0 in sleeps  # the header was honoured
    if name == "429-no-retry-after":
        assert 2.0 not in sleeps and sleeps  # the backoff sequence instead
    if name == "llm-outage":
        assert {c["error"] for c in slots.values()} <= {"server_5xx", SKIPPED_TRAINING_CUTOFF}
    if name in ("5xx", "mix"):
        # Real concurrency: samples waited on an identical search/detector call in flight, and
        # retried calls were shared by several samples.
        traffic = recording.sessions[-1].traffic
        assert traffic["search"]["waited"] + traffic["detector"]["waited"] > 0, traffic
        assert any(e.channel != "llm" and e.requests > 1 and len(e.attempts) > 1 for e in entries)
    if recording.aborted is not None:
        # The first session stopped on the revoked key; the resume finished the run.
        assert recording.run.load_manifest().finished_at is not None


def check_time_comes_from_the_recording(run: RunDir, slots: Slots) -> None:
    """Each slot's timing follows docs/design/record-replay.md ("Time is data") from the entries it used.

    A step's latency is its entry's ``latency_ms`` (retries and backoffs included); a sample's
    ``latency_ms`` adds its searches' entry latencies (failed ones included); its ``created_at``
    is the ``recorded_at`` of its last LLM call's final outcome, failed or not.
    """
    entries = {e.key: e for e in CassetteStore(run.cassettes_dir, writable=False).effective_entries()}
    used = read_sample_keys(run.model_db_paths(run.load_manifest()))
    assert used is not None
    checked = 0
    for slot, cells in slots.items():
        if cells["error"] == SKIPPED_TRAINING_CUTOFF:
            continue
        checked += 1
        mine = [entries[k] for k in used[slot]]
        turns = sorted(
            (e for e in mine if e.channel == "llm" and e.context is not None),
            key=lambda e: (e.context["step"] if e.context else 0, e.occurrence or 0),
        )
        assert parse_timestamp(cells["created_at"]) == parse_timestamp(turns[-1].recorded_at), slot
        if cells["error"] is not None:
            assert cells["latency_ms"] == 0, slot  # a call error stores no model output (run-layout.md)
            continue
        steps = [m["latency_ms"] for m in json.loads(cells["step_metrics"])]
        assert steps == [e.latency_ms for e in turns], slot
        # Each search call (a repeated query too) counts its entry's latency.
        by_query = {json.loads(e.request_body)["query"]: e for e in mine if e.channel == "search"}
        searched = [by_query[call["query"]].latency_ms for call in json.loads(cells["search_calls"])]
        assert cells["latency_ms"] == sum(steps) + sum(searched), slot
    assert checked > 0


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_fault_scenario_replays_byte_for_byte(
    name: str, tmp_path: Path, raw_slot_reader: Callable[[Path], Slots]
) -> None:
    scenario = SCENARIOS[name]
    recording = record(tmp_path / "runs", scenario)
    slots = raw_slot_reader(recording.run.root)
    check_injected(name, recording, slots)
    check_time_comes_from_the_recording(recording.run, slots)
    clock = FakeClock(datetime(2031, 6, 1, tzinfo=UTC))
    report = asyncio.run(
        replay_run(
            recording.run.root,
            tmp_path / "replay",
            clock=clock,
            rand=random.Random(1),
            progress=False,
            after=_analysis(scenario),
        )
    )
    assert [(c.what, c.detail) for c in report.checks if not c.ok] == []
    assert {c.what for c in report.checks} >= {"manifest.json", "analysis/summary.json"}
    assert clock.sleeps == []  # retries and waits replay as their final outcome
    assert all(t["live"] == 0 for t in report.summary.traffic.values())
