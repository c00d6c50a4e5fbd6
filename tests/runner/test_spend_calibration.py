"""``plan --calibrate RUN``: the pilot's averages, derived exactly, move the expected values only."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))

from builder import CUT, EMPTY, RunSpec, ok, write_run

from oracleproto.analysis.prices import PriceTable, TokenPrice
from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import AnalysisError
from oracleproto.runner.setting_roles import SECTIONS
from oracleproto.runner.spend_calibration import load_calibration
from oracleproto.runner.spend_plan import Bound, build_spend_plan
from oracleproto.settings.model import Settings

SLUG = "a/x::r5::c4"
#: a/x is in the pilot; b/y is not (its cutoff admits 12 of the 16 demo questions).
CUTOFFS = {"a/x": "2026-02", "b/y": "2026-03-20"}


def settings() -> Settings:
    """Defaults (environment ignored): a/x and b/y, n = 2, the detector d/z."""
    values: dict[str, dict[str, Any]] = {
        "llm": {"models": list(CUTOFFS), "training_cutoffs": CUTOFFS},
        "detector": {"model": "d/z"},
        "run": {"sampling_n": 2},
    }
    return Settings(**{name: cls.from_values(values.get(name, {})) for name, cls in SECTIONS.items()})  # type: ignore[attr-defined]


def _step(k: int, prompt: int, completion: int) -> dict[str, Any]:
    return {
        "step": k,
        "prompt": prompt,
        "completion": completion,
        "reasoning": 0,
        "cached": 0,
        "cost_usd": 0.001,
    }


def _search() -> dict[str, Any]:
    usage = [{"prompt": 50, "completion": 5, "reasoning": 0, "cached": 0, "cost_usd": 0.0002}] * 3
    return {
        "query": "q",
        "end_date": "2025-12-01",
        "n_results": 2,
        "n_results_raw": 3,
        "n_results_kept": 2,
        "published_dates": [],
        "detector_verdicts": ["keep", "keep", "drop"],
        "detector_usage": usage,
    }


FAILED_SEARCH = {"query": "q", "end_date": "2025-12-01", "n_results": 0, "error_kind": "network"}


def pilot_spec() -> RunSpec:
    """One model, n = 2, two finished samples (an excluded and an unwritten slot do not count).

    Sample 1: three calls (prompts 100, 160, 220; completions 10, 20, 30), two searches of three
    results and a failed one. Sample 2: one call (prompt 100, completion 40), no search.
    """
    first = ok(
        "A",
        steps=3,
        step_metrics=[_step(0, 100, 10), _step(1, 160, 20), _step(2, 220, 30)],
        search=(_search(), _search(), FAILED_SEARCH),
    )
    second = ok("B", steps=1, step_metrics=[_step(0, 100, 40)])
    return RunSpec(n=2, models={SLUG: {"q1": [first, second], "q2": [CUT, EMPTY]}})


@pytest.fixture
def pilot(tmp_path: Path) -> Path:
    """The pilot run directory."""
    return write_run(tmp_path, pilot_spec())


def test_averages_are_derived_exactly(pilot: Path) -> None:
    cal = load_calibration(pilot)
    assert (cal.run_id, cal.samples, list(cal.models)) == ("20260102-030405-abcd", 2, ["a/x"])
    m = cal.models["a/x"]
    assert m == cal.pooled  # one model: the pool is that model
    assert m.samples == 2
    assert m.llm_calls_per_sample == 2.0  # (3 + 1) / 2
    assert m.react_steps_per_sample == 2.0  # (3 + 1) / 2
    assert m.step_index_sum_per_sample == 1.5  # (0 + 1 + 2 + 0) / 2
    assert m.searches_per_sample == 1.0  # two successful searches over two samples
    assert m.results_per_search == 3.0
    assert m.verdicts_per_search == 3.0
    assert (m.prompt_tokens_first_step, m.prompt_growth_per_step) == pytest.approx((100.0, 60.0))
    assert m.prompt_tokens_per_sample() == pytest.approx(290.0)  # (100 + 160 + 220 + 100) / 2
    assert m.completion_tokens_per_call == 25.0  # 100 / 4
    assert (m.detector_prompt_tokens_per_verdict, m.detector_completion_tokens_per_verdict) == (50.0, 5.0)
    assert m.llm_usd_per_call == pytest.approx(0.001)
    assert m.detector_usd_per_verdict == pytest.approx(0.0002)


def test_calibration_moves_expected_values_not_upper_bounds(pilot: Path) -> None:
    prices = PriceTable(
        models={"a/x": TokenPrice(1.0, 2.0), "b/y": TokenPrice(1.0, 2.0), "d/z": TokenPrice(1.0, 1.0)},
        search_usd_per_credit=0.01,
    )
    plain = build_spend_plan(settings(), demo_db_path(), prices=prices)
    cal = load_calibration(pilot)
    tuned = build_spend_plan(settings(), demo_db_path(), prices=prices, calibration=cal)
    names = (
        "llm_calls",
        "search_calls",
        "detector_calls",
        "llm_prompt_tokens",
        "llm_completion_tokens",
        "detector_prompt_tokens",
        "detector_completion_tokens",
    )
    for before, after in zip(plain.cells, tuned.cells, strict=True):
        for name in names:
            assert getattr(before, name).upper == getattr(after, name).upper, name
        for channel, bound in before.usd.items():
            assert bound is not None and after.usd[channel] is not None
            assert after.usd[channel].upper == bound.upper  # type: ignore[union-attr]
    a, b = tuned.cells
    assert a.samples == 32  # 16 questions, n = 2
    assert a.llm_calls == Bound(64, 192)
    assert a.search_calls == Bound(32, 128)
    assert a.detector_calls == Bound(96, 640)
    assert a.llm_prompt_tokens.expected == pytest.approx(290 * 32)
    assert a.llm_completion_tokens.expected == pytest.approx(50 * 32)
    assert a.detector_prompt_tokens.expected == pytest.approx(96 * 50)
    assert a.detector_completion_tokens.expected == pytest.approx(96 * 5)
    # a/x was measured: its recorded $0.001 per call; search at the credit price; verdicts as billed.
    assert a.usd["llm"] is not None and a.usd["llm"].expected == pytest.approx(64 * 0.001)
    assert a.usd["search"] is not None and a.usd["search"].expected == pytest.approx(32 * 0.01)
    assert a.usd["detector"] is not None and a.usd["detector"].expected == pytest.approx(96 * 0.0002)
    # b/y was not: the pooled averages, its LLM priced from the tokens by the table.
    assert b.llm_calls.expected == 2 * b.samples
    assert b.usd["llm"] is not None
    assert b.usd["llm"].expected == pytest.approx((290 * b.samples * 1.0 + 50 * b.samples * 2.0) / 1e6)
    assert tuned.calibration is not None and tuned.calibration["pooled_for"] == ["b/y"]
    assert any("b/y: not in the pilot" in a for a in tuned.assumptions)
    assert plain.calibration is None


def test_a_run_without_finished_samples_is_refused(tmp_path: Path) -> None:
    run = write_run(tmp_path, RunSpec(n=1, models={SLUG: {"q1": [EMPTY], "q2": [CUT]}}))
    with pytest.raises(AnalysisError, match="no finished sample to calibrate from"):
        load_calibration(run)


def test_rows_without_step_metrics_give_a_flat_mean_per_call(tmp_path: Path) -> None:
    # An older run: only the token columns (prompt 100 over react_steps 2 calls, completion 40).
    run = write_run(tmp_path, RunSpec(n=1, models={SLUG: {"q1": [ok("A")], "q2": [ok("B", prompt=300)]}}))
    m = load_calibration(run).models["a/x"]
    assert (m.llm_calls_per_sample, m.prompt_tokens_first_step, m.prompt_growth_per_step) == (2.0, 100.0, 0.0)
    assert m.prompt_tokens_per_sample() == 200.0  # (100 + 300) / 2 samples
    assert m.llm_usd_per_call is None and m.detector_prompt_tokens_per_verdict is None
