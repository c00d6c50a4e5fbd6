"""Family B (probabilistic) metrics from ``belief_final`` vectors (App. B.9, Eqs. bs-lab … gamma-uni).

A belief vector is a JSON object letter → probability. Missing letters count as probability 0.
Probabilities are clipped to [1e-3, 1 − 1e-3] before any logarithm, never for Brier scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleproto.analysis import exact
from oracleproto.analysis.conventions import Convention
from oracleproto.analysis.family_a import masked_mean
from oracleproto.analysis.trials import BoolArray, FloatArray, TrialTable

EPS = 1e-3
FALLBACK_MASS = 0.95


def belief_vector(raw: Any, k: int, width: int) -> FloatArray | None:
    """A (width,) vector from a letter → probability mapping; None if it is not one."""
    if not isinstance(raw, dict) or not raw:
        return None
    vec = np.zeros(width)
    for letter, p in raw.items():
        if not isinstance(letter, str) or len(letter) != 1 or not 0 <= ord(letter) - 65 < k:
            return None
        if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= float(p) <= 1.0:
            return None
        vec[ord(letter) - 65] = float(p)
    return vec


def fallback_vector(letters: BoolArray, k: int) -> FloatArray | None:
    """reference-v4 fallback: 0.95 on each boxed letter, 0.05 spread over the others."""
    boxed = int(letters[:k].sum())
    if boxed in (0, k):
        return None
    vec = np.where(letters, FALLBACK_MASS, (1.0 - FALLBACK_MASS) / (k - boxed))
    vec[k:] = 0.0
    return vec


@dataclass(frozen=True)
class Beliefs:
    """(Q, n, L) belief vectors, where one exists, and which came from the fallback."""

    p: FloatArray
    has: BoolArray
    fallback: BoolArray


def beliefs(t: TrialTable, convention: Convention, protocol_on: bool) -> Beliefs:
    """Collect belief vectors of counted trials (reference-v4 adds fallbacks when protocol off)."""
    width = t.gold.shape[1]
    p = np.zeros((t.n_questions, t.n, width))
    has = np.zeros((t.n_questions, t.n), dtype=bool)
    fallback = np.zeros_like(has)
    use_fallback = convention is Convention.REFERENCE_V4 and not protocol_on
    for q in range(t.n_questions):
        k = int(t.k[q])
        for j in range(t.n):
            if not t.counted[q, j]:
                continue
            raw = t.belief_final[q][j] if t.belief_final else None
            # With the protocol off the paper reports no family, even from a vector a damaged or foreign
            # table holds; reference-v4 scores such a vector as the earlier code did (the belief, else
            # the fallback: docs/design/metrics.md).
            stored = protocol_on or (raw is not None and convention is Convention.REFERENCE_V4)
            vec = belief_vector(raw, k, width) if stored else None
            if vec is None and use_fallback and t.parsed[q, j]:
                vec = fallback_vector(t.pred[q, j], k)
                fallback[q, j] = vec is not None
            if vec is not None:
                p[q, j], has[q, j] = vec, True
    return Beliefs(p, has, fallback)


def trial_scores(t: TrialTable, b: Beliefs) -> dict[str, FloatArray]:
    """(Q, n) BS_lab, BS_dec, NLL, MBS per trial (meaningless where ``b.has`` is False)."""
    o = t.gold[:, None, :].astype(np.float64)
    valid = t.label_valid[:, None, :]
    k = t.k[:, None].astype(np.float64)
    bs_lab = np.where(valid, (b.p - o) ** 2, 0.0).sum(axis=2) / k
    clipped = np.clip(b.p, EPS, 1.0 - EPS)
    p_star = np.where(t.gold[:, None, :], clipped, 0.0).max(axis=2)
    nll_single = -exact.log(np.maximum(p_star, EPS))
    ce = -(o * exact.log(clipped) + (1 - o) * exact.log(1 - clipped))
    nll_multi = np.where(valid, ce, 0.0).sum(axis=2) / k
    return {
        "bs_lab": bs_lab,
        "bs_dec": k * bs_lab,
        "nll": np.where(t.multi[:, None], nll_multi, nll_single),
        "mbs": 100.0 * (exact.log2(np.maximum(p_star, EPS)) + 1.0),
    }


def _per_question(values: FloatArray, mask: BoolArray) -> tuple[FloatArray, BoolArray]:
    cnt = mask.sum(axis=1)
    return np.where(mask, values, 0.0).sum(axis=1) / np.maximum(cnt, 1), np.asarray(cnt > 0)


def gamma_uniform(t: TrialTable) -> FloatArray:
    """(Q,) Eq. (gamma-uni): per-label Brier of the uniform predictor."""
    o = t.gold.astype(np.float64)
    return np.asarray(
        np.where(t.label_valid, (1.0 / t.k[:, None] - o) ** 2, 0.0).sum(axis=1) / t.k, dtype=np.float64
    )


def question_mean_beliefs(t: TrialTable, b: Beliefs) -> dict[str, FloatArray]:
    """Per question id, the mean belief vector of the model (for the ABI crowd)."""
    out: dict[str, FloatArray] = {}
    for q, qid in enumerate(t.question_ids):
        if b.has[q].any():
            out[qid] = b.p[q][b.has[q]].mean(axis=0)[: int(t.k[q])]
    return out


def crowd_vectors(t: TrialTable, others: list[dict[str, FloatArray]]) -> tuple[FloatArray, BoolArray]:
    """(Q,) per-label Brier of the leave-one-out crowd mean, and which questions have a crowd at all."""
    gamma = gamma_uniform(t)
    has = np.zeros(t.n_questions, dtype=bool)
    for q, qid in enumerate(t.question_ids):
        vectors = [m[qid] for m in others if qid in m and len(m[qid]) == int(t.k[q])]
        if vectors:
            crowd = np.mean(vectors, axis=0)
            o = t.gold[q, : int(t.k[q])].astype(np.float64)
            gamma[q] = float(((crowd - o) ** 2).mean())
            has[q] = True
    return gamma, has


def brier_index(mean_bs: float | None) -> float | None:
    """Eq. (bi-app): 100 (1 − sqrt(mean BS))."""
    return None if mean_bs is None else 100.0 * (1.0 - math.sqrt(max(mean_bs, 0.0)))


def adjusted_brier_index(mean_abs: float | None) -> float | None:
    """Eq. (abi-app): sign-symmetric adjusted Brier index."""
    if mean_abs is None:
        return None
    root = math.sqrt(abs(mean_abs))
    return 100.0 * (1.0 - root) if mean_abs >= 0 else 100.0 * (1.0 + root)


def mean_vector_scores(t: TrialTable, b: Beliefs) -> tuple[dict[str, FloatArray], BoolArray]:
    """reference-v4: each question's trial vectors averaged into one vector, scored once.

    Returns (Q,) BS_lab, BS_dec, NLL, MBS of the mean vectors, and the questions that have one.
    """
    count = b.has.sum(axis=1)
    defined = np.asarray(count > 0)
    mean = np.where(b.has[:, :, None], b.p, 0.0).sum(axis=1) / np.maximum(count, 1)[:, None]
    # One pseudo-trial per question: trial_scores broadcasts over the sample axis.
    single = Beliefs(mean[:, None, :], defined[:, None], np.zeros((t.n_questions, 1), dtype=bool))
    return {name: v[:, 0] for name, v in trial_scores(t, single).items()}, defined


def _question_scores(
    t: TrialTable, b: Beliefs, convention: Convention
) -> tuple[dict[str, FloatArray], BoolArray]:
    """(Q,) per-question scores and which questions have one, under ``convention``."""
    if convention is Convention.REFERENCE_V4:
        return mean_vector_scores(t, b)
    scores = trial_scores(t, b)
    per_q = {name: _per_question(v, b.has) for name, v in scores.items()}
    return {name: value for name, (value, _) in per_q.items()}, per_q["bs_lab"][1]


def family_b(
    t: TrialTable,
    b: Beliefs,
    crowd: list[dict[str, FloatArray]] | None = None,
    convention: Convention = Convention.PAPER,
) -> dict[str, float | None]:
    """Model-level BS_lab, BS_dec, NLL, MBS, BI, ABI-uniform, ABI-crowd, fallback share.

    ``paper`` scores every trial and averages per question (App. B.9); ``reference-v4`` scores
    each question's mean vector once, as the earlier implementation does, and computes the crowd
    ABI over the questions another model has a vector for (the uniform ABI when none has).
    """
    per_q, defined = _question_scores(t, b, convention)
    single = ~t.multi
    bs_q = per_q["bs_lab"]
    mean_bs = masked_mean(bs_q, defined)
    uni = gamma_uniform(t)
    abi_uniform = adjusted_brier_index(masked_mean(bs_q - uni, defined))
    crowd_gamma, has_crowd = crowd_vectors(t, crowd or [])
    if convention is Convention.REFERENCE_V4:
        with_crowd = defined & has_crowd
        abi_crowd = (
            adjusted_brier_index(masked_mean(bs_q - crowd_gamma, with_crowd))
            if with_crowd.any()
            else abi_uniform
        )
        # A question counts as scored from fallbacks only when every vector it has is one.
        from_fallback = np.asarray((b.fallback | ~b.has).all(axis=1) & defined)
    else:
        abi_crowd = adjusted_brier_index(masked_mean(bs_q - crowd_gamma, defined))
        from_fallback = np.asarray(b.fallback.any(axis=1))
    return {
        "bs_lab": mean_bs,
        "bs_dec": masked_mean(per_q["bs_dec"], defined & single),
        "nll": masked_mean(per_q["nll"], defined),
        "mbs": masked_mean(per_q["mbs"], defined & single),
        "brier_index": brier_index(mean_bs),
        "abi_uniform": abi_uniform,
        "abi_crowd": abi_crowd,
        "fallback_question_share": masked_mean(from_fallback.astype(np.float64), defined),
    }
