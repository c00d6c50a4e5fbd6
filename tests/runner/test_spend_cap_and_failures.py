"""``--max-cost`` stops a recording resumably and the resume completes it as if uncapped; injected
429s show up as retries, failed verdicts and removed results (run summary, summary.json, table note)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oracleproto.analysis.postrun import analyze_with_settings
from oracleproto.analysis.writer import write_analysis
from oracleproto.cli.main import cli
from oracleproto.dataset.demo import demo_db_path
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.spend_cap import SpendCap, SpendCapError
from oracleproto.settings.model import Settings
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store import RunDir
from oracleproto.store.peek import peek_config_snapshot

RUN_ID = "20260101-000000-ca9e"
QUESTIONS = 8


def _analysis_without_plots(run: RunDir, settings: Settings) -> None:
    write_analysis(analyze_with_settings(run.root, settings.analysis), run.analysis_dir, plots=False)


Slots = Callable[[Path], dict[Any, dict[str, Any]]]


def record(
    runs_root: Path,
    *,
    cap: float | None = None,
    faults: FaultConfig | None = None,
    analysis: bool = False,
    config_file: dict[str, str] | None = None,
) -> RunSummary:
    """One model (sim/careful, which reports usage.cost), 8 questions, n = 2, no detector unless
    faults are given; the analysis without plots (matplotlib would dominate the test's time)."""
    fault_config = faults or FaultConfig()
    spec = SimRunSpec(models=1, samples=2, runs_root=runs_root, detector=faults is not None)
    with Simulator(SimConfig(seed=0, chat=fault_config, search=fault_config)) as sim:
        settings = simulated_settings(sim, spec)
        limited = settings.run.model_copy(update={"question_limit": QUESTIONS})
        settings = settings.model_copy(update={"run": limited})
        spend = None if cap is None else SpendCap(cap, prices=None, detector_model=None, usd_per_search=None)
        options = RunOptions(
            settings=settings,
            source_db=demo_db_path(),
            runs_root=runs_root,
            mode="record",
            run_id=RUN_ID,
            progress=False,
            after=_analysis_without_plots if analysis else None,
            spend_cap=spend,
            config_file=config_file,
        )
        return asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))


def test_the_cap_stops_resumably_and_the_resume_equals_an_uncapped_run(
    tmp_path: Path, slot_reader: Slots
) -> None:
    uncapped = tmp_path / "uncapped"
    record(uncapped)
    capped = tmp_path / "capped"
    with pytest.raises(SpendCapError) as stopped:
        record(capped, cap=0.001)
    message = str(stopped.value)
    assert message.startswith("spend cap: run 20260101-000000-ca9e: this session spent $")
    assert "reaching --max-cost $0.001" in message
    assert f"rerun with --run-id {RUN_ID}" in message
    partial = slot_reader(capped / RUN_ID)
    answered = [s for s in partial.values() if s["created_at_present"] and s["error"] is None]
    assert 0 < len(answered) < 2 * QUESTIONS  # it stopped early, keeping what it finished
    log = (capped / RUN_ID / "logs").glob("*.log")
    assert any('"reason": "spend_cap"' in p.read_text(encoding="utf-8") for p in log)
    summary = record(capped)  # resumed without a cap
    assert summary.slots_done_before + summary.slots_run == summary.slots_total == 2 * QUESTIONS
    assert slot_reader(capped / RUN_ID) == slot_reader(uncapped / RUN_ID)


def test_a_spend_cap_exits_5(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "sim",
            "run",
            "--models",
            "1",
            "--samples",
            "1",
            "--no-detector",
            "--no-report",
            "--no-progress",
            "--runs-root",
            str(tmp_path),
            "--max-cost",
            "0.0005",
        ],
    )
    assert result.exit_code == 5, result.output
    assert "spend cap:" in result.stderr and "stopped and is resumable" in result.stderr


def test_injected_429s_are_reported_per_model_everywhere(tmp_path: Path) -> None:
    summary = record(tmp_path, faults=FaultConfig(fail_429=0.3, retry_after_s=0), analysis=True)
    slug = "sim/careful::r5::c4"
    live = summary.failures.models[slug]
    assert live.retries["llm"] > 0 and sum(live.detector_failed.values()) > 0
    assert live.results_removed == sum(live.detector_failed.values())  # fail-closed drops each one
    lines = summary.failures.lines()
    assert any(line.startswith(f"  {slug}: llm retries {live.retries['llm']}") for line in lines), lines
    run = tmp_path / RUN_ID
    stored = json.loads((run / "analysis" / "summary.json").read_text(encoding="utf-8"))["call_failures"][
        slug
    ]
    # The analysis derives the same numbers from the stores alone (DB and cassettes).
    assert stored["retries"]["llm"] == live.retries["llm"]
    assert stored["retries"]["search"] == live.retries["search"]
    assert stored["detector_failed"] == dict(live.detector_failed)
    assert stored["results_removed"] == live.results_removed
    assert stored["retried_on"]["llm"] == {"HTTP 429": live.retries["llm"]}
    table = (run / "analysis" / "table3_overall.md").read_text(encoding="utf-8")
    assert f"Call failures, {slug}: llm retries {live.retries['llm']}" in table
    assert f"search results removed by fail-closed {live.results_removed}" in table


def test_the_run_command_prints_the_failures_not_call_errors_none(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli,
        [
            "sim",
            "run",
            "--models",
            "1",
            "--samples",
            "1",
            "--fail-429",
            "0.5",
            "--no-report",
            "--no-progress",
            "--runs-root",
            str(tmp_path),
            # Half the calls rate-limited: a sample or two may exhaust its retries (a partial run).
            "--allow-errors",
            "100%",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "retries and failures this session (per model):" in result.stderr
    assert "sim/careful::r5::c4: llm retries" in result.stderr
    assert "search result(s) removed by fail-closed" in result.stderr


def test_the_config_file_is_recorded_in_the_snapshot(tmp_path: Path) -> None:
    record(tmp_path, config_file={"name": "oracleproto.toml", "sha256": "ab" * 32})
    snapshot = peek_config_snapshot(tmp_path / RUN_ID / "db" / "sim__careful__r5__c4.db")
    assert snapshot is not None and snapshot["config_file"] == {
        "name": "oracleproto.toml",
        "sha256": "ab" * 32,
    }
