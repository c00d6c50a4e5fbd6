"""Family C (behavioural) metrics from ``belief_trace`` (App. B.9, Eqs. behav-*).

Expected trace shape (a JSON list, one object per reasoning step, in step order)::

    [{"step": 0, "belief": {"A": 0.6, "B": 0.4}, "confidence": "low|medium|high",
      "counterevidence": ["free-text bullet naming option B", ...]}, ...]

``belief`` is required per step (a step without a valid one is skipped); ``confidence`` and
``counterevidence`` are optional.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

import numpy as np

from oracleproto.analysis.family_b import EPS, belief_vector
from oracleproto.analysis.trials import FloatArray, TrialTable

CONVERGENCE_RADIUS = 0.05
LOW_CONFLICT = 0.70  # linguistic "low" while mean max-probability > 0.70
HIGH_CONFLICT = 0.55  # linguistic "high" while mean max-probability < 0.55
CONFIDENCE_LEVELS = ("low", "medium", "high")
PD_GRID = (-2.0, -1.0, 0.0, 1.0, 2.0)
FEATURES = ("tool_calls_count", "react_steps", "latency_ms", "prompt_tokens", "completion_tokens")
_LETTER = re.compile(r"\b([A-Z])\b")


def trace_vectors(trace: Any, k: int, width: int) -> list[FloatArray]:
    """The valid per-step belief vectors of one trace, in order."""
    if not isinstance(trace, list):
        return []
    out: list[FloatArray] = []
    for step in trace:
        vec = belief_vector(step.get("belief"), k, width) if isinstance(step, dict) else None
        if vec is not None:
            out.append(vec)
    return out


def _nll(vec: FloatArray, gold: Any, multi: bool, k: int) -> float:
    p = np.clip(vec[:k], EPS, 1 - EPS)
    o = gold[:k].astype(np.float64)
    if multi:
        return float(-(o * np.log(p) + (1 - o) * np.log(1 - p)).mean())
    return float(-np.log(p[o > 0]).max())


def counterevidence_flag(trace: Any, boxed: set[str], k: int) -> bool | None:
    """1 when the last counter-evidence bullet names an option letter outside the boxed answer."""
    if not isinstance(trace, list):
        return None
    bullets = [b for step in trace if isinstance(step, dict) for b in (step.get("counterevidence") or [])]
    if not bullets:
        return None
    letters = {m for m in _LETTER.findall(str(bullets[-1])) if ord(m) - 65 < k}
    return bool(letters - boxed)


def family_c(t: TrialTable) -> dict[str, Any]:
    """Volatility, inter-trial σ, convergence step, evidence efficiency, counter-evidence, calibration."""
    width = t.gold.shape[1]
    vol, conv, eta, flags, sigmas = [], [], [], [], []
    calibration: dict[str, list[float]] = {level: [] for level in CONFIDENCE_LEVELS}
    any_trace = False
    for q in range(t.n_questions):
        k, multi = int(t.k[q]), bool(t.multi[q])
        finals: list[FloatArray] = []
        for j in range(t.n):
            if not t.counted[q, j] or not t.belief_trace:
                continue
            trace = t.belief_trace[q][j]
            steps = trace_vectors(trace, k, width)
            if not steps:
                continue
            any_trace = True
            final = steps[-1]
            finals.append(final)
            if len(steps) >= 2:
                vol.append(float(np.mean([np.linalg.norm(b - a) for a, b in itertools.pairwise(steps)])))
            conv.append(
                float(next(i for i, b in enumerate(steps) if np.linalg.norm(final - b) < CONVERGENCE_RADIUS))
            )
            drop = _nll(steps[0], t.gold[q], multi, k) - _nll(final, t.gold[q], multi, k)
            eta.append(drop / max(1, int(t.search_calls[q, j])))
            boxed = {chr(65 + i) for i in np.flatnonzero(t.pred[q, j])}
            flag = counterevidence_flag(trace, boxed, k)
            if flag is not None:
                flags.append(float(flag))
            levels = [s.get("confidence") for s in trace if isinstance(s, dict) and s.get("confidence")]
            if levels and levels[-1] in calibration:
                calibration[str(levels[-1])].append(float(final[:k].max()))
        if len(finals) >= 2:
            stack = np.stack(finals)
            sigmas.append(float(np.sqrt(((stack - stack.mean(axis=0)) ** 2).sum(axis=1).mean())))
    if not any_trace:
        return {"defined": False}

    def mean(values: list[float]) -> float | None:
        return float(np.mean(values)) if values else None

    cross = {
        level: {
            "trials": len(vals),
            "mean_max_p": mean(vals),
            "bins": np.bincount(np.minimum((np.asarray(vals) * 10).astype(int), 9), minlength=10).tolist(),
        }
        for level, vals in calibration.items()
    }
    p_low, p_high = cross["low"]["mean_max_p"], cross["high"]["mean_max_p"]
    conflict = (p_low is not None and float(p_low) > LOW_CONFLICT) or (
        p_high is not None and float(p_high) < HIGH_CONFLICT
    )
    return {
        "defined": True,
        "volatility": mean(vol),
        "inter_trial_sigma": mean(sigmas),
        "convergence_step": mean(conv),
        "evidence_efficiency": mean(eta),
        "counterevidence_rate": mean(flags),
        "calibration": cross,
        "calibration_conflict": bool(conflict),
    }


def _zscore(x: FloatArray) -> FloatArray:
    sd = x.std(axis=0)
    return np.asarray((x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0), dtype=np.float64)


def irls_logistic(x: FloatArray, y: FloatArray, iterations: int = 50, ridge: float = 1e-6) -> FloatArray:
    """Logistic regression by iteratively reweighted least squares; returns [bias, coefs…]."""
    design = np.column_stack([np.ones(len(x)), x])
    beta = np.zeros(design.shape[1])
    for _ in range(iterations):
        mu = 1.0 / (1.0 + np.exp(-np.clip(design @ beta, -30, 30)))
        w = np.maximum(mu * (1 - mu), 1e-9)
        hessian = design.T @ (design * w[:, None]) + ridge * np.eye(design.shape[1])
        step = np.linalg.solve(hessian, design.T @ (y - mu) - ridge * beta)
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            break
    return beta


def ridge_regression(x: FloatArray, y: FloatArray, lam: float = 1.0) -> FloatArray:
    """Closed-form ridge (bias unpenalised); returns [bias, coefs…]."""
    design = np.column_stack([np.ones(len(x)), x])
    penalty = lam * np.eye(design.shape[1])
    penalty[0, 0] = 0.0
    return np.asarray(np.linalg.solve(design.T @ design + penalty, design.T @ y))


def _features(t: TrialTable, mask: Any) -> FloatArray:
    columns = (t.tool_calls, t.react_steps, t.latency_ms, t.prompt_tokens, t.completion_tokens)
    return _zscore(np.column_stack([a[mask].astype(np.float64) for a in columns]))


def tool_use_dependence(
    t: TrialTable, nll: FloatArray | None = None, nll_mask: Any = None
) -> dict[str, Any] | None:
    """IRLS logistic P(correct|x) (and ridge E[NLL|x] when given) on the five z-scored features."""
    mask = t.counted
    if mask.sum() < len(FEATURES) + 2:
        return None
    x = _features(t, mask)
    y = t.correct[mask].astype(np.float64)
    beta = irls_logistic(x, y)
    out: dict[str, Any] = {"features": list(FEATURES), "logistic": beta.tolist(), "partial_dependence": {}}
    for f, name in enumerate(FEATURES):
        curve = []
        for z in PD_GRID:
            xz = x.copy()
            xz[:, f] = z
            curve.append(
                float(
                    (
                        1.0
                        / (1.0 + np.exp(-np.clip(np.column_stack([np.ones(len(xz)), xz]) @ beta, -30, 30)))
                    ).mean()
                )
            )
        out["partial_dependence"][name] = curve
    if nll is not None and nll_mask is not None:
        both = mask & nll_mask
        if both.sum() >= len(FEATURES) + 2:
            out["ridge_nll"] = ridge_regression(_features(t, both), nll[both]).tolist()
    return out


def question_behaviour(t: TrialTable) -> dict[str, FloatArray]:
    """(Q,) per-question σ, mean convergence step and mean evidence efficiency (NaN = undefined)."""
    width = t.gold.shape[1]
    out = {name: np.full(t.n_questions, np.nan) for name in ("sigma", "convergence", "efficiency")}
    for q in range(t.n_questions):
        k, multi = int(t.k[q]), bool(t.multi[q])
        finals, conv, eta = [], [], []
        for j in range(t.n):
            if not t.counted[q, j] or not t.belief_trace:
                continue
            steps = trace_vectors(t.belief_trace[q][j], k, width)
            if not steps:
                continue
            final = steps[-1]
            finals.append(final)
            conv.append(
                next(i for i, b in enumerate(steps) if np.linalg.norm(final - b) < CONVERGENCE_RADIUS)
            )
            drop = _nll(steps[0], t.gold[q], multi, k) - _nll(final, t.gold[q], multi, k)
            eta.append(drop / max(1, int(t.search_calls[q, j])))
        if len(finals) >= 2:
            stack = np.stack(finals)
            out["sigma"][q] = float(np.sqrt(((stack - stack.mean(axis=0)) ** 2).sum(axis=1).mean()))
        if conv:
            out["convergence"][q] = float(np.mean(conv))
            out["efficiency"][q] = float(np.mean(eta))
    return out
