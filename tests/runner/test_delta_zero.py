"""δ = 0: every question resolves by its own cutoff (χ = τ), so it is excluded after resolution —
stored with its own reason, done for the resume rule, excluded from every metric."""

from __future__ import annotations

import sqlite3
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from oracleproto.agent.result import SKIPPED_AFTER_RESOLUTION, SKIPPED_TRAINING_CUTOFF, SampleResult
from oracleproto.analysis import analyze_run
from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.loader import load_questions
from oracleproto.runner.execute import RunSummary
from oracleproto.settings.model import Settings
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import Simulator
from oracleproto.store import RunDir
from tests.runner.conftest import record_with

RUN_ID = "20260301-120000-de17"
#: sim/sloppy's training cutoff: questions resolving before it are excluded by the cutoff first.
SLOPPY_CUTOFF = datetime(2026, 3, 20, tzinfo=UTC).date()


def test_each_exclusion_reason_has_its_own_error_value() -> None:
    at = datetime(2026, 3, 1, tzinfo=UTC)
    assert SampleResult.skipped(at).error == SKIPPED_TRAINING_CUTOFF
    assert SampleResult.skipped(at, "before_training_cutoff").error == SKIPPED_TRAINING_CUTOFF
    assert SampleResult.skipped(at, "after_resolution").error == SKIPPED_AFTER_RESOLUTION
    with pytest.raises(ValueError, match="unknown admission exclusion reason 'later'"):
        SampleResult.skipped(at + timedelta(days=1), "later")


def _run(settings: Settings, runs_root: Path) -> RunSummary:
    return record_with(settings, runs_root, RUN_ID)


def _errors(run: RunDir) -> dict[str, Counter[str | None]]:
    manifest = run.load_manifest()
    out: dict[str, Counter[str | None]] = {}
    for slug, path in run.model_db_paths(manifest).items():
        counts: Counter[str | None] = Counter()
        with sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True) as conn:
            for i in range(manifest.sampling_n):
                for created, error in conn.execute(f"SELECT s{i}_created_at, s{i}_error FROM run_results"):
                    assert created is not None
                    counts[error] += 1
        conn.close()
        out[slug] = counts
    return out


def test_a_delta_zero_run_asks_nothing_stores_its_reason_and_resumes_as_done(tmp_path: Path) -> None:
    spec = SimRunSpec(personas=("careful", "sloppy"), samples=2, runs_root=tmp_path)
    with Simulator() as sim:
        settings = simulated_settings(sim, spec)
        settings = settings.model_copy(update={"run": settings.run.model_copy(update={"delta_days": 0})})
        first = _run(settings, tmp_path)
        assert first.slots_run == 0 and first.slots_total == 2 * 16 * 2
        assert sum(stats.get("requests", 0) for stats in first.traffic.values()) == 0
        resumed = _run(settings, tmp_path)
    assert resumed.slots_run == 0 and resumed.slots_done_before == resumed.slots_total
    run = RunDir.open(tmp_path / RUN_ID)
    early = sum(1 for q in load_questions(demo_db_path()) if q.end_time < SLOPPY_CUTOFF)
    assert 0 < early < 16
    assert _errors(run) == {
        "sim/careful::r5::c4": Counter({SKIPPED_AFTER_RESOLUTION: 32}),
        "sim/sloppy::r5::c4": Counter(
            {SKIPPED_TRAINING_CUTOFF: 2 * early, SKIPPED_AFTER_RESOLUTION: 2 * (16 - early)}
        ),
    }
    for convention in ("paper", "reference-v4"):
        result = analyze_run(run.root, convention, bootstrap_samples=0)
        for entry in result.models.values():
            # Excluded, not failed: nothing is counted, so nothing is scored or called an error.
            assert entry["composite_accuracy"] is None and entry["eval_questions"] == 0
            assert not entry["error_rate"]
        assert [
            (r["excluded_by_cutoff"], r["excluded_after_resolution"]) for r in result.models_under_test
        ] == [
            (0, 16),
            (early, 16 - early),
        ]
