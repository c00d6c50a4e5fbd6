"""Reflection A/B (App. B.9 C): paired-bootstrap CIs between two runs differing only in reflection.

Pairs models by virtual slug and questions by id; Δ = on − off for BI, σ, convergence step and
evidence efficiency. The runs must match on every other fingerprint of the hash chain.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oracleproto.analysis import exact
from oracleproto.analysis.bootstrap import percentile_ci, resample_counts
from oracleproto.analysis.conventions import Convention
from oracleproto.analysis.family_b import beliefs, trial_scores
from oracleproto.analysis.family_c import question_behaviour
from oracleproto.analysis.reader import ModelRun, RunData
from oracleproto.analysis.trials import FloatArray, IntArray
from oracleproto.errors import AnalysisError

MATCH_KEYS = ("source_db_hash", "metadata_hash", "prompt_templates_hash", "belief_protocol_hash")


def _check_pair(on: ModelRun, off: ModelRun) -> None:
    differing = [k for k in MATCH_KEYS if on.run_meta.get(k) != off.run_meta.get(k)]
    if differing:
        raise AnalysisError(
            f"reflection A/B for {on.slug!r}: the runs differ in {', '.join(differing)}; "
            "they must differ only in reflection_protocol_hash"
        )
    if on.run_meta.get("reflection_protocol_hash") == off.run_meta.get("reflection_protocol_hash"):
        raise AnalysisError(
            f"reflection A/B for {on.slug!r}: both runs have the same reflection_protocol_hash"
        )
    if not on.run_meta.get("reflection_protocol_hash"):
        raise AnalysisError(f"reflection A/B for {on.slug!r}: the 'on' run has no reflection protocol")


def _per_question(m: ModelRun) -> dict[str, dict[str, float]]:
    t = m.table
    b = beliefs(t, Convention.PAPER, protocol_on=True)
    bs = trial_scores(t, b)["bs_lab"]
    cnt = b.has.sum(axis=1)
    bs_q = np.where(cnt > 0, np.where(b.has, bs, 0.0).sum(axis=1) / np.maximum(cnt, 1), np.nan)
    behaviour = question_behaviour(t)
    return {
        qid: {"bs": float(bs_q[q]), **{k: float(v[q]) for k, v in behaviour.items()}}
        for q, qid in enumerate(t.question_ids)
    }


def _bi(bs: FloatArray) -> FloatArray:
    return np.asarray(100.0 * (1.0 - np.sqrt(np.maximum(bs, 0.0))), dtype=np.float64)


def _replicate_means(counts: IntArray, x: FloatArray) -> FloatArray:
    """(B,) mean of ``x`` over each replicate's draws: an exactly rounded sum over the count drawn
    (no BLAS product, whose rounding depends on the CPU); NaN where nothing was drawn."""
    drawn = counts.sum(axis=1)
    sums = [exact.total(np.repeat(x, row)) for row in counts]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(drawn > 0, np.asarray(sums) / np.maximum(drawn, 1), np.nan)


def reflection_ab(on: RunData, off: RunData, *, samples: int = 1000, seed: int = 20260430) -> dict[str, Any]:
    """Per shared model slug: Δ (on − off) of BI, σ, convergence, efficiency with paired 95% CIs."""
    off_models = {m.slug: m for m in off.models}
    shared = [m for m in on.models if m.slug in off_models]
    if not shared:
        raise AnalysisError("reflection A/B: the two runs share no model slug")
    out: dict[str, Any] = {}
    for m_on in shared:
        m_off = off_models[m_on.slug]
        _check_pair(m_on, m_off)
        a, b = _per_question(m_on), _per_question(m_off)
        ids = sorted(set(a) & set(b))
        buckets = dict(zip(m_on.table.question_ids, m_on.table.bucket.tolist(), strict=True))
        counts = resample_counts(np.asarray([buckets[q] for q in ids], dtype=np.int64), samples, seed)
        result: dict[str, Any] = {"questions": len(ids)}
        for metric in ("bs", "sigma", "convergence", "efficiency"):
            x_on = np.asarray([a[q][metric] for q in ids])
            x_off = np.asarray([b[q][metric] for q in ids])
            both = ~np.isnan(x_on) & ~np.isnan(x_off)
            name = "delta_bi" if metric == "bs" else f"delta_{metric}"
            if not both.any():
                result[name] = {"value": None, "ci": None, "paired_questions": 0}
                continue
            w = counts[:, both]
            mean_on, mean_off = _replicate_means(w, x_on[both]), _replicate_means(w, x_off[both])
            point_on, point_off = exact.mean(x_on[both]), exact.mean(x_off[both])
            if metric == "bs":
                point = float(_bi(np.asarray([point_on]))[0] - _bi(np.asarray([point_off]))[0])
                draws = _bi(mean_on) - _bi(mean_off)
            else:
                point = point_on - point_off
                draws = mean_on - mean_off
            result[name] = {"value": point, "ci": percentile_ci(draws), "paired_questions": int(both.sum())}
        out[m_on.slug] = result
    return out
