"""The paper conventions' bootstrap of a run: CIs, paired differences, tests and ranks.

One (B × Q) resample-count matrix, drawn per bucket stratum over the union of the models'
questions, gives every model's replicates of composite accuracy and pass@1 (``bootstrap.py``),
so paired differences pair exactly. From analysis revision 5 (``revisions.HEADLINE_COMPARISONS``)
the same exact replicates of composite accuracy — the headline metric of ``paper`` and
``reference-v4`` — also give the pairwise p-values (Holm, Benjamini–Hochberg) and the rank
stability (``comparisons.py``). Older revisions' arithmetic is kept so ``verify`` can re-score
runs they published: revisions before 4 in floating point, revision 4 without comparisons.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np

from oracleproto.analysis import family_a as fa
from oracleproto.analysis.bootstrap import (
    RatioColumns,
    Replicates,
    exact_ci,
    percentile_ci,
    replicate_composite,
    replicate_ratio,
    resample_counts,
    resample_weights,
)
from oracleproto.analysis.comparisons import exact_replicates, headline_comparisons
from oracleproto.analysis.conventions import Convention, composite_weights
from oracleproto.analysis.exact import decimal, numpy_reductions
from oracleproto.analysis.reader import ModelRun, RunData
from oracleproto.analysis.revisions import headline_comparisons_of
from oracleproto.analysis.trials import FloatArray, IntArray

#: The metric whose pairwise tests and ranks the paper conventions report: their headline.
HEADLINE = "composite_accuracy"
Comparisons = dict[str, Any] | None


def bootstrap_run(
    run: RunData,
    conv: Convention,
    entries: dict[str, dict[str, Any]],
    *,
    samples: int,
    seed: int,
    revision: int,
) -> tuple[list[dict[str, Any]], Comparisons]:
    """Attach CIs to every entry; return the paired differences and (revision ≥ 5) the comparisons."""
    ids = sorted({q for m in run.models for q in m.table.question_ids})
    pos = {q: i for i, q in enumerate(ids)}
    strata = np.zeros(len(ids), dtype=np.int64)
    for m in run.models:
        strata[[pos[q] for q in m.table.question_ids]] = m.table.bucket
    order = [m.slug for m in run.models]
    with_comparisons = headline_comparisons_of(revision)
    if samples == 0 or not ids:
        for e in entries.values():
            e["ci"] = {"composite_accuracy": None, "pass_at_1_avg": None}
        # No resample, no test: the block still says which models were compared, with null p-values.
        empty: dict[str, list[Fraction | None]] = {slug: [] for slug in order}
        return [], _comparisons(order, entries, empty) if with_comparisons else None
    if numpy_reductions():
        return _float_bootstrap(run, conv, entries, resample_weights(strata, samples, seed), pos), None
    counts = resample_counts(strata, samples, seed)
    draws: dict[str, dict[str, Replicates]] = {}
    for m in run.models:
        idx = np.asarray([pos[q] for q in m.table.question_ids], dtype=np.int64)
        stats = _ratio_statistics(m, conv, idx, len(ids))
        draws[m.slug] = {key: Replicates.draw(stat, counts) for key, stat in stats.items()}
        entries[m.slug]["ci"] = {key: exact_ci(r.approx, r.exact) for key, r in draws[m.slug].items()}
    paired: list[dict[str, Any]] = []
    for a, b in itertools.combinations(order, 2):
        for metric in ("composite_accuracy", "pass_at_1_avg"):
            ra, rb = draws[a][metric], draws[b][metric]
            va, vb = entries[a][metric], entries[b][metric]
            paired.append(
                {
                    "a": a,
                    "b": b,
                    "metric": metric,
                    "difference": None if va is None or vb is None else va - vb,
                    "ci": exact_ci(ra.approx - rb.approx, _difference(ra, rb)),
                }
            )
    if not with_comparisons:
        return paired, None
    replicates = {slug: exact_replicates(draws[slug][HEADLINE]) for slug in order}
    return paired, _comparisons(order, entries, replicates)


def _comparisons(
    order: list[str], entries: dict[str, dict[str, Any]], replicates: dict[str, list[Fraction | None]]
) -> dict[str, Any]:
    """The headline metric's tests and ranks (models with an undefined point value left out)."""
    point = {slug: entries[slug][HEADLINE] for slug in order}
    return headline_comparisons(order, point, replicates, metric=HEADLINE)


def _difference(a: Replicates, b: Replicates) -> Callable[[int], Fraction]:
    """Replicate r of a − b, exactly (paired: both use draw r), once per distinct pair of sums."""
    seen: dict[tuple[tuple[int, ...], tuple[int, ...]], Fraction] = {}

    def value(r: int) -> Fraction:
        key = (a.sums(r), b.sums(r))
        if key not in seen:
            seen[key] = a.exact(r) - b.exact(r)
        return seen[key]

    return value


def _ratio_statistics(m: ModelRun, conv: Convention, idx: IntArray, width: int) -> dict[str, RatioColumns]:
    """Composite accuracy and pass@1 of ``m`` as exact ratio statistics over all ``width`` questions."""
    t = m.table
    weights = composite_weights(conv)
    a, d, defined = fa.exam_parts(t)
    members = [fa.bucket_members(t.bucket, name) & defined for name in weights]
    composite = RatioColumns(
        np.column_stack([_embed(idx, width, np.where(rows, a, 0)) for rows in members]),
        np.column_stack([_embed(idx, width, d, fill=1) for _ in members]),
        np.column_stack([_embed(idx, width, rows) for rows in members]),
        tuple(decimal(w) for w in weights.values()),
    )
    p_a, p_d, p_den = fa.pass_parts(t, conv)
    pass_at_1 = RatioColumns(
        _embed(idx, width, p_a)[:, None],
        _embed(idx, width, p_d, fill=1)[:, None],
        _embed(idx, width, p_den)[:, None],
        (decimal(1.0),),
    )
    return {"composite_accuracy": composite, "pass_at_1_avg": pass_at_1}


def _embed(idx: IntArray, width: int, values: Any, *, fill: int = 0) -> IntArray:
    """A model's per-question integers placed at its questions' positions among all ``width``."""
    out = np.full(width, fill, dtype=np.int64)
    out[idx] = values
    return out


def _float_bootstrap(
    run: RunData,
    conv: Convention,
    entries: dict[str, dict[str, Any]],
    weights: FloatArray,
    pos: dict[str, int],
) -> list[dict[str, Any]]:
    """The bootstrap of an analysis revision before exact reductions (BLAS products, float quantiles)."""
    width = weights.shape[1]
    names = list(composite_weights(conv))
    bucket_w = np.asarray([composite_weights(conv)[b] for b in names])
    draws: dict[str, dict[str, FloatArray]] = {}
    for m in run.models:
        t = m.table
        idx = np.asarray([pos[q] for q in t.question_ids], dtype=np.int64)
        value, defined = fa.per_question_exam(t)
        nums = np.zeros((width, len(names)))
        dens = np.zeros((width, len(names)))
        for c, name in enumerate(names):
            members = fa.bucket_members(t.bucket, name) & defined
            nums[idx, c] = np.where(members, value, 0.0)
            dens[idx, c] = members
        comp = replicate_composite(replicate_ratio(weights, nums, dens), bucket_w)
        p_num, p_den = fa.per_question_pass(t, conv)
        num_a, den_a = np.zeros(width), np.zeros(width)
        num_a[idx], den_a[idx] = p_num, p_den
        p1 = replicate_ratio(weights, num_a, den_a)
        draws[m.slug] = {"composite_accuracy": comp, "pass_at_1_avg": p1}
        entries[m.slug]["ci"] = {key: percentile_ci(arr) for key, arr in draws[m.slug].items()}
    paired: list[dict[str, Any]] = []
    for a, b in itertools.combinations([m.slug for m in run.models], 2):
        for metric in ("composite_accuracy", "pass_at_1_avg"):
            va, vb = entries[a][metric], entries[b][metric]
            paired.append(
                {
                    "a": a,
                    "b": b,
                    "metric": metric,
                    "difference": None if va is None or vb is None else va - vb,
                    "ci": percentile_ci(draws[a][metric] - draws[b][metric]),
                }
            )
    return paired
