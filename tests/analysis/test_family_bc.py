"""Families B and C, hand-computed on a small run with the belief protocol on."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from builder import FAIL, QUESTIONS, RunSpec, ok, write_run
from conftest import ALPHA

from oracleproto.analysis import family_b as fb
from oracleproto.analysis import family_c as fc
from oracleproto.analysis.conventions import Convention
from oracleproto.analysis.reader import read_run
from oracleproto.analysis.report import analyze_run

GAMMA, DELTA = "lab/gamma::r5::c4", "lab/delta::r5::c4"
HIT = {"query": "q", "end_date": "2025-12-01", "n_results": 1, "published_dates": []}
TRACE0 = [
    {"step": 0, "belief": {"A": 0.5, "B": 0.5}, "confidence": "low"},
    {
        "step": 1,
        "belief": {"A": 0.8, "B": 0.2},
        "confidence": "high",
        "counterevidence": ["Option B may win"],
    },
]
TRACE1 = [
    {"step": 0, "belief": {"A": 0.5, "B": 0.5}},
    {"step": 1, "belief": {"A": 0.42, "B": 0.58}},
    {
        "step": 2,
        "belief": {"A": 0.4, "B": 0.6},
        "confidence": "medium",
        "counterevidence": ["B remains likely"],
    },
]


def belief_spec() -> RunSpec:
    questions = tuple(q for q in QUESTIONS if q.id in ("q1", "q6"))
    return RunSpec(
        n=2,
        questions=questions,
        belief_hash="feedfacefeedface",
        models={
            GAMMA: {
                "q1": [
                    ok("A", belief={"A": 0.8, "B": 0.2}, trace=TRACE0),
                    ok("B", belief={"A": 0.4, "B": 0.6}, trace=TRACE1, search=(HIT, HIT)),
                ],
                "q6": [ok("A,C", belief={"A": 0.9, "B": 0.1, "C": 0.7, "D": 0.0, "E": 0.0}), FAIL],
            },
            DELTA: {
                "q1": [ok("A", belief={"A": 1.0, "B": 0.0}), ok("A", belief={"A": 1.0, "B": 0.0})],
                "q6": [ok("A"), ok("A")],
            },
        },
    )


@pytest.fixture
def belief_run(tmp_path: Path) -> Path:
    return write_run(tmp_path, belief_spec())


def test_family_b_hand_computed(belief_run: Path) -> None:
    result = analyze_run(belief_run, bootstrap_samples=0)
    b = result.models[GAMMA]["family_b"]
    # q1: BS_lab = ((0.8−1)² + 0.2²)/2 = 0.04 and ((0.4−1)² + 0.6²)/2 = 0.36 → 0.2
    # q6: ((0.9−1)² + 0.1² + (0.7−1)² + 0 + 0)/5 = 0.022
    assert b["bs_lab"] == pytest.approx((0.2 + 0.022) / 2)
    assert b["bs_dec"] == pytest.approx(2 * 0.2)  # single-answer only: k · BS_lab
    nll_q1 = (-math.log(0.8) - math.log(0.4)) / 2
    nll_q6 = -(2 * math.log(0.9) + math.log(0.7) + 2 * math.log(1 - 1e-3)) / 5  # D, E clipped to 1e-3
    assert b["nll"] == pytest.approx((nll_q1 + nll_q6) / 2)
    assert b["mbs"] == pytest.approx((100 * (math.log2(0.8) + 1) + 100 * (math.log2(0.4) + 1)) / 2)
    assert b["brier_index"] == pytest.approx(100 * (1 - math.sqrt(0.111)))
    # γ_uni: q1 ((½−1)² + ½²)/2 = 0.25; q6 (2·0.8² + 3·0.2²)/5 = 0.28 → mean ABS = (−0.05 − 0.258)/2 < 0
    assert b["abi_uniform"] == pytest.approx(100 * (1 + math.sqrt(0.154)))
    # crowd = delta's mean vector on q1 = (1, 0) → γ = 0; delta has no belief on q6 → uniform 0.28
    assert b["abi_crowd"] == pytest.approx(100 * (1 + math.sqrt(abs((0.2 - 0.0 + 0.022 - 0.28) / 2))))


def test_family_b_none_when_protocol_off_under_paper(main_run: Path) -> None:
    result = analyze_run(main_run, bootstrap_samples=0)
    assert result.models[ALPHA]["family_b"] is None
    assert result.models[ALPHA]["family_c"] is None


def test_reference_fallback_vectors(main_run: Path) -> None:
    t = next(m.table for m in read_run(main_run).models if m.slug == ALPHA)
    b = fb.beliefs(t, Convention.REFERENCE_V4, protocol_on=False)
    # q1 [A, A, B]: 0.95 on the boxed letter, 0.05 on the other
    assert b.p[0, 0, :2].tolist() == pytest.approx([0.95, 0.05])
    assert b.p[0, 2, :2].tolist() == pytest.approx([0.05, 0.95])
    # q6 "A,B" on five letters: 0.95 on A and B, 0.05/3 on C, D, E
    assert b.p[5, 2, :5].tolist() == pytest.approx([0.95, 0.95, 0.05 / 3, 0.05 / 3, 0.05 / 3])
    scores = fb.family_b(t, b)
    assert scores["fallback_question_share"] == 1.0
    assert fb.fallback_vector(t.pred[0, 0] | True, 2) is None  # every letter boxed: undefined


def test_family_c_hand_computed(belief_run: Path) -> None:
    c = analyze_run(belief_run, bootstrap_samples=0).models[GAMMA]["family_c"]
    # volatility: t0 ‖(0.3, −0.3)‖ = 0.4243; t1 mean(‖(−.08,.08)‖, ‖(−.02,.02)‖) = 0.0707
    assert c["volatility"] == pytest.approx(
        (math.sqrt(0.18) + (math.sqrt(0.0128) + math.sqrt(0.0008)) / 2) / 2
    )
    # finals (0.8,0.2), (0.4,0.6), centroid (0.6,0.4): sqrt(mean squared distance) = sqrt(0.08)
    assert c["inter_trial_sigma"] == pytest.approx(math.sqrt(0.08))
    assert c["convergence_step"] == pytest.approx(1.0)  # both converge at step 1
    # η: t0 (−ln .5 + ln .8)/1 ; t1 (−ln .5 + ln .4)/2 searches
    assert c["evidence_efficiency"] == pytest.approx((math.log(1.6) + math.log(0.8) / 2) / 2)
    assert c["counterevidence_rate"] == pytest.approx(0.5)  # t0 names B outside {A}; t1 names only B
    assert c["calibration"]["high"]["mean_max_p"] == pytest.approx(0.8)
    assert c["calibration"]["high"]["bins"][8] == 1
    assert c["calibration_conflict"] is False


def test_calibration_conflict_thresholds() -> None:
    from oracleproto.analysis.trials import TrialState, TrialTable

    trace = [{"step": 0, "belief": {"A": 0.9, "B": 0.1}, "confidence": "low"}]
    t = TrialTable(
        question_ids=("q",),
        bucket=np.array([0]),
        question_type=("yes_no",),
        k=np.array([2]),
        gold=np.array([[True, False]]),
        state=np.array([[TrialState.PARSED]]),
        pred=np.array([[[True, False]]]),
        belief_trace=((trace,),),
        **{
            f: np.zeros((1, 1), dtype=np.int64)
            for f in (
                "prompt_tokens",
                "completion_tokens",
                "reasoning_tokens",
                "tool_calls",
                "react_steps",
                "latency_ms",
                "search_calls",
                "detector_calls",
            )
        },
    )
    out = fc.family_c(t)
    assert out["calibration"]["low"]["mean_max_p"] == pytest.approx(0.9)
    assert out["calibration_conflict"] is True  # low bucket with mean max-p 0.9 > 0.70


def test_irls_and_ridge_recover_known_models() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4000, 2))
    p = 1 / (1 + np.exp(-(0.5 + 1.5 * x[:, 0] - 1.0 * x[:, 1])))
    y = (rng.random(4000) < p).astype(float)
    beta = fc.irls_logistic(x, y)
    assert beta.tolist() == pytest.approx([0.5, 1.5, -1.0], abs=0.15)
    target = 2.0 + 3.0 * x[:, 0]
    assert fc.ridge_regression(x, target, lam=0.0).tolist() == pytest.approx([2.0, 3.0, 0.0], abs=1e-9)
