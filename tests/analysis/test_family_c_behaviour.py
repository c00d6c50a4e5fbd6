"""Family C's per-question behaviour, the multi-answer NLL drop and the fits' edges, by hand.

make mutation (group ``families``) left ``question_behaviour`` (read by the reflection analysis)
untested, and the multi-answer evidence efficiency of ``family_c``. The table (n = 4, three
letters wide, so a letter lies beyond k = 2):

q0 (yes/no, gold A): s0 a call error whose trace must be ignored; s1 parsed without a trace;
s2 A with 3 steps and 2 searches; s3 A with 2 steps and 1 search.
q1 (multi-answer, k = 2, gold {A}): s1 A with 2 steps and 1 search; the others cut or failed.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from tables_by_hand import CUT, ERR, FAIL, table

from oracleproto.analysis import family_c as fc

EPS = 1e-3


def step(a: float, b: float, **extra: Any) -> dict[str, Any]:
    return {"belief": {"A": a, "B": b}, **extra}


S2 = [step(0.0, 1.0), step(0.5, 0.5), step(0.05, 1.0)]
S3 = [step(0.5, 0.5), step(0.6, 0.4)]
Q1 = [step(0.5, 0.2), step(0.9, 0.0)]

T = table(
    [("yes_no", 2, "A"), ("mc_multi", 2, "A")],
    [[ERR, "A", "A", "A"], [CUT, "A", FAIL, CUT]],
    width=3,
    counters={"search_calls": [[0, 0, 2, 1], [0, 1, 0, 0]]},
    belief_trace=[[[step(1.0, 0.0)], None, S2, S3], [None, Q1, None, None]],
)

# Evidence efficiency, NLL(first step) − NLL(last step) over max(1, searches):
# q0 s2 (gold A, single answer): −ln 1e-3 (A's 0 clipped) − (−ln 0.05) = ln 50, over 2 searches.
ETA_S2 = math.log(50) / 2
# q0 s3: −ln 0.5 − (−ln 0.6) = ln 1.2, over 1 search.
ETA_S3 = math.log(1.2)
# q1 (multi-answer, k = 2: the mean cross-entropy of letters A and B only): first step
# (−ln 0.5 − ln 0.8)/2, last step (−ln 0.9 − ln(1 − 1e-3))/2 (B's 0 clipped to 1e-3); 1 search.
ETA_Q1 = (math.log(2) + math.log(1.25) + math.log(0.9) + math.log(1 - EPS)) / 2


def test_question_behaviour() -> None:
    out = fc.question_behaviour(T)
    # σ of q0's two finals (0.05, 1, 0) and (0.6, 0.4, 0): each is half their distance from the mean.
    assert out["sigma"][0] == pytest.approx(math.sqrt(0.55**2 + 0.6**2) / 2, rel=1e-12)
    assert math.isnan(out["sigma"][1])  # one final only
    # Convergence: s2's first step is exactly 0.05 from its final (not within), its second 0.67 away:
    # step 2; s3's first step is 0.14 away: step 1. q1's first step is about 0.45 away: step 1.
    assert out["convergence"].tolist() == [1.5, 1.0]
    assert out["efficiency"][0] == pytest.approx((ETA_S2 + ETA_S3) / 2, rel=1e-12)
    assert out["efficiency"][1] == pytest.approx(ETA_Q1, rel=1e-12)


def test_question_behaviour_undefined_without_traces() -> None:
    t = table([("yes_no", 2, "A")], [["A", "B"]], width=2)
    out = fc.question_behaviour(t)
    assert all(math.isnan(v[0]) for v in out.values())


def test_family_c_multi_answer_efficiency() -> None:
    out = fc.family_c(T)
    # The mean over the three traced counted trials (s0 is a call error).
    assert out["evidence_efficiency"] == pytest.approx((ETA_S2 + ETA_S3 + ETA_Q1) / 3, rel=1e-12)
    assert out["convergence_step"] == pytest.approx(4 / 3, rel=1e-15)


def test_calibration_bins_are_tenths() -> None:
    traces = [[[step(0.55, 0.45, confidence="medium")], [step(0.19, 0.81, confidence="medium")]]]
    out = fc.family_c(table([("yes_no", 2, "A")], [["A", "B"]], width=2, belief_trace=traces))
    # Max probabilities 0.55 and 0.81: bins 5 and 8.
    assert out["calibration"]["medium"]["bins"] == [0, 0, 0, 0, 0, 1, 0, 0, 1, 0]


def sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def test_irls_keeps_going_and_clips_at_30() -> None:
    # Separable points x = ±1 and ±2 (y = 1 on the positive side), no ridge: the fit never
    # converges, so all 50 iterations run. By symmetry the bias stays 0 and each Newton step on the
    # slope s is Σ x (y − μ) / Σ w x², per pair (1 − μ(s) + 2 (1 − μ(2s))) / (w(s) + 4 w(2s)) with
    # μ(z) = σ(clip(z, −30, 30)) and w = max(μ (1 − μ), 1e-9).
    x = np.array([[1.0], [-1.0], [2.0], [-2.0]])
    y = np.array([1.0, 0.0, 1.0, 0.0])

    def mu(z: float) -> float:
        return sigmoid(min(max(z, -30.0), 30.0))

    def w(z: float) -> float:
        return max(mu(z) * (1 - mu(z)), 1e-9)

    s = 0.0
    for _ in range(50):
        s += ((1 - mu(s)) + 2 * (1 - mu(2 * s))) / (w(s) + 4 * w(2 * s))
    assert 15 < s < 30  # the points at ±2 lie beyond the clip for the last iterations
    beta = fc.irls_logistic(x, y, ridge=0.0)
    assert abs(beta[0]) < 1e-5
    assert beta[1] == pytest.approx(s, rel=1e-6)


def test_irls_stops_only_below_the_tolerance() -> None:
    # x = ±2e10, y = 1, 0, no ridge. From 0: μ = ½, w = ¼, so the first step on the slope is
    # Σ x (y − ½) / Σ ¼ x² = 2e10 / 2e20 = 1e-10 exactly: not below 1e-10, so a second step follows,
    # 1 / (2e10 σ(2)) (each point at z = ±2).
    x = np.array([[2e10], [-2e10]])
    y = np.array([1.0, 0.0])
    # Every operand is exact in binary (2e10, its square) and the one division is correctly rounded.
    assert fc.irls_logistic(x, y, iterations=1, ridge=0.0)[1] == 1e-10
    beta = fc.irls_logistic(x, y, iterations=2, ridge=0.0)
    assert beta[1] == pytest.approx(1e-10 + 1 / (2e10 * sigmoid(2.0)), rel=1e-9, abs=0)


def test_partial_dependence_clips_at_30(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the fit (bias 0, 40 on tool calls), each curve point is the mean of σ(clip(η, −30, 30)).
    t = table(
        [("yes_no", 2, "A")],
        [["A", "A", "A", "A", "B", "B", "B"]],
        width=2,
        counters={"tool_calls": [[0, 0, 0, 0, 0, 0, 7]]},
    )
    monkeypatch.setattr(fc, "irls_logistic", lambda x, y: np.array([0.0, 40.0, 0.0, 0.0, 0.0, 0.0]))
    out = fc.tool_use_dependence(t)
    assert out is not None
    curve = out["partial_dependence"]["tool_calls_count"]
    # Tool calls set to z = −2 … 2: η = 40 z, clipped to ±30 except at 0.
    # σ(±30) lie within pytest.approx's default absolute tolerance of 0 and 1: compare relatively.
    low, high = sigmoid(-30.0), 1 - sigmoid(30.0)
    assert low == pytest.approx(math.exp(-30), rel=1e-12, abs=0)
    assert curve[:2] == pytest.approx([low, low], rel=1e-12, abs=0)
    assert curve[2] == 0.5
    # 1 − σ(30) ≈ e^−30 is a difference of floats near 1: good to about 0.1 %.
    assert [1 - curve[3], 1 - curve[4]] == pytest.approx([high, high], rel=1e-2, abs=0)


def test_nll_ridge_uses_trials_with_an_nll_only() -> None:
    # Constant features: the ridge fit is the mean NLL (bias) and zero coefficients.
    t = table([("yes_no", 2, "A")], [["A", "A", "A", "A", "B", "B", "B", "B"]], width=2)
    nll = np.arange(8, dtype=np.float64)[None, :]
    # 7 of 8 trials have an NLL: the mean of 0 … 6 is 3 (with the 8th it would be 3.5).
    seven = np.array([[True] * 7 + [False]])
    out = fc.tool_use_dependence(t, nll, seven)
    assert out is not None and out["ridge_nll"] == pytest.approx([3.0, 0, 0, 0, 0, 0], abs=1e-12)
    # 5 trials with an NLL are too few for the 5 features (at least 7 needed).
    five = np.array([[True] * 5 + [False] * 3])
    assert "ridge_nll" not in (fc.tool_use_dependence(t, nll, five) or {})
