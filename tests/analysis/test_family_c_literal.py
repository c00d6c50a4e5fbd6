"""Family C pieces with values worked out by hand (make mutation found them untested)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from tables_by_hand import ERR, table

from oracleproto.analysis import family_c as fc

EPS = 1e-3


def test_nll_single_and_multi_answer() -> None:
    gold2 = np.array([True, False, False, False, False])
    assert fc._nll(np.array([0.8, 0.2, 0, 0, 0]), gold2, False, 2) == pytest.approx(-math.log(0.8))
    # Probabilities are clipped to [1e-3, 1 − 1e-3] before the logarithm.
    assert fc._nll(np.array([0.0, 1.0, 0, 0, 0]), gold2, False, 2) == pytest.approx(-math.log(EPS))
    assert fc._nll(np.array([1.0, 0.0, 0, 0, 0]), gold2, False, 2) == pytest.approx(-math.log(1 - EPS))
    # Multi-answer, gold {A, C}, k = 4 (letters beyond k ignored): per-label cross-entropy
    # A −ln 0.5, B (p 0 → 1e-3) −ln 0.999, C (p 1 → 0.999) −ln 0.999, D −ln 0.75; their mean.
    gold = np.array([True, False, True, False, False])
    vec = np.array([0.5, 0.0, 1.0, 0.25, 0.9])
    expected = (-math.log(0.5) - 2 * math.log(1 - EPS) - math.log(0.75)) / 4
    assert fc._nll(vec, gold, True, 4) == pytest.approx(expected, rel=1e-12)


def test_trace_vectors_skip_steps_that_are_not_objects() -> None:
    trace = ["note", {"belief": {"A": 0.4, "B": 0.6}}, {"belief": {"Q": 1}}, {"step": 3}]
    assert [v.tolist() for v in fc.trace_vectors(trace, 2, 3)] == [[0.4, 0.6, 0.0]]
    assert fc.trace_vectors("not a list", 2, 3) == []


def test_counterevidence_names_options_of_the_question_only() -> None:
    trace = [{"counterevidence": ["A may win"]}, {"counterevidence": ["C is out of reach"]}]
    # Only the last bullet counts; with k = 2 there is no option C.
    assert fc.counterevidence_flag(trace, {"A"}, 2) is False
    assert fc.counterevidence_flag(trace, {"A"}, 3) is True
    assert fc.counterevidence_flag(trace, {"C"}, 3) is False
    assert fc.counterevidence_flag([{"belief": {}}], {"A"}, 3) is None
    assert fc.counterevidence_flag(None, {"A"}, 3) is None


def step(a: float, b: float, **extra: Any) -> dict[str, Any]:
    return {"belief": {"A": a, "B": b}, **extra}


def test_family_c_by_hand() -> None:
    traces = [
        [
            # q0, s0: converges at step 1 (step 0 is exactly 0.05 away: not within the radius).
            [step(0.0, 1.0, confidence="low"), step(0.05, 1.0), step(0.05, 1.0, confidence="extreme")],
            # s1: a call error whose trace must be ignored.
            [step(1.0, 0.0, confidence="high")],
            # s2: one step, "high" at 0.5.
            [step(0.5, 0.5, confidence="high", counterevidence=["B could still win"])],
        ],
    ]
    t = table(
        [("yes_no", 2, "A")],
        [["B", ERR, "B"]],
        width=2,
        counters={"search_calls": [[2, 0, 0]]},
        belief_trace=traces,
    )
    out = fc.family_c(t)
    # s0: steps (0, 1), (0.05, 1), (0.05, 1): moves 0.05 and 0 → volatility 0.025 (s2 has one step).
    assert out["volatility"] == pytest.approx(0.025)
    # Convergence: s0 at step 1, s2 at step 0 → 0.5.
    assert out["convergence_step"] == 0.5
    # σ between the finals (0.05, 1) and (0.5, 0.5): each is half the distance from their mean:
    # |d| = sqrt(0.45² + 0.5²), σ = |d| / 2.
    assert out["inter_trial_sigma"] == pytest.approx(math.sqrt(0.45**2 + 0.5**2) / 2)
    # Efficiency: s0 NLL drop (−ln 1e-3) − (−ln 0.05) over 2 searches; s2 drop 0 over max(1, 0).
    assert out["evidence_efficiency"] == pytest.approx((math.log(0.05) - math.log(EPS)) / 2 / 2)
    # Counter-evidence: only s2 has a bullet; it names B, which s2 boxed: 0.
    assert out["counterevidence_rate"] == 0.0
    # Calibration: s0's last known level is "extreme" (no such level: not counted); s2 "high", max 0.5.
    assert out["calibration"] == {
        "low": {"trials": 0, "mean_max_p": None, "bins": [0] * 10},
        "medium": {"trials": 0, "mean_max_p": None, "bins": [0] * 10},
        "high": {"trials": 1, "mean_max_p": 0.5, "bins": [0, 0, 0, 0, 0, 1, 0, 0, 0, 0]},
    }
    assert out["calibration_conflict"] is True  # "high" while the mean max-probability is < 0.55
    assert out["defined"] is True


def calibration_of(levels_and_max: list[tuple[str, float]]) -> dict[str, Any]:
    traces = [[[step(p, 1 - p, confidence=level)] for level, p in levels_and_max]]
    t = table([("yes_no", 2, "A")], [["A"] * len(levels_and_max)], width=2, belief_trace=traces)
    return fc.family_c(t)


def test_calibration_bins_and_conflict_thresholds() -> None:
    out = calibration_of([("low", 0.7), ("low", 1.0), ("medium", 0.55)])
    # max probabilities 0.7 and 1.0 → bins 7 and 9 (1.0 is put in the last bin).
    assert out["calibration"]["low"] == {"trials": 2, "mean_max_p": 0.85, "bins": [0] * 7 + [1, 0, 1]}
    assert out["calibration_conflict"] is True  # low at 0.85 > 0.70
    assert calibration_of([("low", 0.7)])["calibration_conflict"] is False  # 0.70 is not above 0.70
    assert calibration_of([("high", 0.55)])["calibration_conflict"] is False  # 0.55 is not below 0.55
    assert calibration_of([("medium", 0.9)])["calibration_conflict"] is False


def test_the_last_stated_confidence_counts() -> None:
    traces = [[[step(0.8, 0.2, confidence="medium"), step(0.9, 0.1)]]]
    out = fc.family_c(table([("yes_no", 2, "A")], [["A"]], width=2, belief_trace=traces))
    assert out["calibration"]["medium"] == {"trials": 1, "mean_max_p": 0.9, "bins": [0] * 9 + [1]}


def test_family_c_undefined_without_traces() -> None:
    assert fc.family_c(table([("yes_no", 2, "A")], [["A", "B"]])) == {"defined": False}


def test_zscore() -> None:
    x = np.array([[1.0, 10.0, 0.0], [3.0, 10.0, 1.0], [5.0, 10.0, 0.5]])
    z = fc._zscore(x)
    # Column 0: mean 3, sd sqrt(8/3); column 1 constant: 0; column 2: mean 0.5, sd sqrt(1/6).
    assert z[:, 0].tolist() == pytest.approx([-2 / math.sqrt(8 / 3), 0.0, 2 / math.sqrt(8 / 3)])
    assert z[:, 1].tolist() == [0.0, 0.0, 0.0]
    assert z[:, 2].tolist() == pytest.approx([-0.5 / math.sqrt(1 / 6), 0.5 / math.sqrt(1 / 6), 0.0])


def test_ridge_regression_leaves_the_bias_unpenalised() -> None:
    # Design [[1, −1], [1, 0], [1, 1]]: DᵀD = diag(3, 2), Dᵀy = (6, 5); λ on the slope only:
    # bias 6/3 = 2, slope 5/(2 + λ).
    x, y = np.array([[-1.0], [0.0], [1.0]]), np.array([0.0, 1.0, 5.0])
    assert fc.ridge_regression(x, y).tolist() == pytest.approx([2.0, 5 / 3])
    assert fc.ridge_regression(x, y, lam=3.0).tolist() == pytest.approx([2.0, 1.0])


def test_irls_first_step_and_intercept_only_fit() -> None:
    x, y = np.zeros((7, 1)), np.array([1.0, 1, 1, 1, 0, 0, 0])
    # One Newton step from 0: μ = ½, w = ¼; step = Σ(y − ½) / (7 · ¼ + 1e-6) = 0.5 / 1.750001.
    assert fc.irls_logistic(x, y, iterations=1)[0] == pytest.approx(0.5 / 1.750001, rel=1e-12)
    # Converged: the bias b solves Σ(y − σ(b)) = 1e-6 · b, i.e. 4 − 7 σ(b) = 1e-6 b (bisection).
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 4 - 7 / (1 + math.exp(-mid)) - 1e-6 * mid > 0:
            lo = mid
        else:
            hi = mid
    beta = fc.irls_logistic(x, y)
    assert beta[0] == pytest.approx(lo, rel=1e-9) and beta[1] == 0.0
    assert lo == pytest.approx(math.log(4 / 3), rel=1e-5)


def test_tool_use_dependence_with_constant_features() -> None:
    # Constant features z-score to 0: the logistic fit is the intercept alone, every coefficient 0,
    # and every partial-dependence point is σ(b) = 4/7 (up to the 1e-6 ridge).
    t = table([("yes_no", 2, "A")], [["A", "A", "A", "A", "B", "B", "B"]], width=2)
    out = fc.tool_use_dependence(t)
    assert out is not None
    assert out["features"] == list(fc.FEATURES)
    assert out["logistic"][0] == pytest.approx(math.log(4 / 3), rel=1e-5)
    assert out["logistic"][1:] == [0.0] * 5
    assert set(out["partial_dependence"]) == set(fc.FEATURES)
    for curve in out["partial_dependence"].values():
        assert curve == pytest.approx([4 / 7] * 5, rel=1e-5)
    assert "ridge_nll" not in out
    # The NLL ridge needs both the NLL and its mask; 6 trials are too few for the logistic fit.
    nll = np.arange(7, dtype=np.float64)[None, :]
    with_nll = fc.tool_use_dependence(t, nll, np.ones((1, 7), dtype=bool))
    assert with_nll is not None and with_nll["ridge_nll"] == pytest.approx([3.0, 0, 0, 0, 0, 0])
    assert "ridge_nll" not in (fc.tool_use_dependence(t, nll, None) or {})
    assert fc.tool_use_dependence(table([("yes_no", 2, "A")], [["A"] * 6], width=2)) is None
