"""Run-level roll-ups of a refresh: answer flips per sample, metric deltas per model with paired CIs.

Both runs are read through the analysis reader (stores only). Deltas are after − before for
pass@1_avg and composite accuracy; their 95% CI comes from one question-cluster bootstrap
(stratified by bucket) applied to both runs with the same draws, i.e. paired over questions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oracleproto.analysis import family_a as fa
from oracleproto.analysis.bootstrap import (
    percentile_ci,
    replicate_composite,
    replicate_ratio,
    resample_weights,
)
from oracleproto.analysis.conventions import Convention, composite_weights
from oracleproto.analysis.reader import ModelRun, RunData
from oracleproto.analysis.trials import BUCKETS, MC_MULTI, MC_SINGLE, FloatArray, TrialState, TrialTable

METRICS = ("pass_at_1_avg", "composite_accuracy")


def _outcome(t: TrialTable, q: int, j: int) -> dict[str, Any]:
    state = TrialState(int(t.state[q, j]))
    letters = [chr(65 + i) for i in np.flatnonzero(t.pred[q, j])] if state is TrialState.PARSED else None
    correct = bool(t.correct[q, j]) if state in (TrialState.PARSED, TrialState.PARSE_FAIL) else None
    return {"state": state.name.lower(), "letters": letters, "correct": correct}


def answer_flips(before: RunData, after: RunData) -> list[dict[str, Any]]:
    """Every (model, question, sample) whose state, letters or correctness differ."""
    old_models = {m.slug: m for m in before.models}
    rows: list[dict[str, Any]] = []
    for m in after.models:
        prev = old_models.get(m.slug)
        if prev is None:
            continue
        index = {qid: i for i, qid in enumerate(prev.table.question_ids)}
        for q, qid in enumerate(m.table.question_ids):
            if qid not in index:
                continue
            for j in range(min(m.table.n, prev.table.n)):
                a, b = _outcome(prev.table, index[qid], j), _outcome(m.table, q, j)
                if a != b:
                    rows.append({"model": m.slug, "question": qid, "sample": j, "before": a, "after": b})
    return rows


def _bucket_members(bucket: Any, name: str) -> Any:
    if name == "mc":
        return (bucket == MC_SINGLE) | (bucket == MC_MULTI)
    return bucket == BUCKETS.index(name)


def _draws(m: ModelRun, ids: list[str], weights: FloatArray, conv: Convention) -> dict[str, FloatArray]:
    t = m.table
    pos = {q: i for i, q in enumerate(t.question_ids)}
    idx = np.asarray([pos[q] for q in ids], dtype=np.int64)
    names = list(composite_weights(conv))
    value, defined = fa.per_question_exam(t)
    nums, dens = np.zeros((len(ids), len(names))), np.zeros((len(ids), len(names)))
    for c, name in enumerate(names):
        members = _bucket_members(t.bucket, name) & defined
        nums[:, c] = np.where(members, value, 0.0)[idx]
        dens[:, c] = members[idx]
    bucket_w = np.asarray([composite_weights(conv)[b] for b in names])
    p_num, p_den = fa.per_question_pass(t, conv)
    return {
        "composite_accuracy": replicate_composite(replicate_ratio(weights, nums, dens), bucket_w),
        "pass_at_1_avg": replicate_ratio(weights, p_num[idx], p_den[idx]),
    }


def _point(t: TrialTable, conv: Convention) -> dict[str, float | None]:
    return {
        "pass_at_1_avg": fa.pass_at_1(t, conv),
        "composite_accuracy": fa.composite_accuracy(fa.bucket_exam(t), conv),
    }


def metric_deltas(
    before: RunData, after: RunData, convention: Convention, *, samples: int, seed: int
) -> list[dict[str, Any]]:
    """Per shared model slug and metric: before, after, delta and the paired-bootstrap CI of the delta."""
    old_models = {m.slug: m for m in before.models}
    rows: list[dict[str, Any]] = []
    for m in after.models:
        prev = old_models.get(m.slug)
        if prev is None:
            continue
        ids = sorted(set(m.table.question_ids) & set(prev.table.question_ids))
        a, b = _point(prev.table, convention), _point(m.table, convention)
        cis: dict[str, tuple[float, float] | None] = dict.fromkeys(METRICS)
        if ids and samples > 0:
            pos = {q: i for i, q in enumerate(m.table.question_ids)}
            strata = m.table.bucket[[pos[q] for q in ids]]
            weights = resample_weights(np.asarray(strata, dtype=np.int64), samples, seed)
            da, db = _draws(prev, ids, weights, convention), _draws(m, ids, weights, convention)
            cis = {k: percentile_ci(db[k] - da[k]) for k in METRICS}
        for metric in METRICS:
            va, vb = a[metric], b[metric]
            rows.append(
                {
                    "model": m.slug,
                    "metric": metric,
                    "before": va,
                    "after": vb,
                    "delta": None if va is None or vb is None else vb - va,
                    "ci": None if cis[metric] is None else list(cis[metric] or ()),
                    "paired_questions": len(ids),
                }
            )
    return rows
