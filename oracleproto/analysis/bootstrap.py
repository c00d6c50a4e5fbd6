"""Question-cluster bootstrap, stratified by bucket, as one resample-count matrix.

Every statistic is a ratio of per-question sums, so a replicate is ``W @ x`` with ``W`` the
(B, Q) matrix of how often each question was drawn: all models and metrics share one matmul
and the same draws, which also makes paired differences between models exact pairings.
"""

from __future__ import annotations

import numpy as np

from oracleproto.analysis.trials import FloatArray, IntArray

CI_LEVEL = 0.95


def resample_weights(strata: IntArray, samples: int, seed: int) -> FloatArray:
    """(samples, Q) draw counts: within each stratum, questions resampled with replacement."""
    rng = np.random.default_rng(seed)
    weights = np.zeros((samples, len(strata)), dtype=np.float64)
    rows = np.arange(samples)[:, None]
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        draws = members[rng.integers(0, len(members), size=(samples, len(members)))]
        np.add.at(weights, (np.broadcast_to(rows, draws.shape), draws), 1.0)
    return weights


def replicate_ratio(weights: FloatArray, num: FloatArray, den: FloatArray) -> FloatArray:
    """(B, ...) replicate values of sum(num)/sum(den); NaN where a replicate has no denominator."""
    top, bottom = weights @ num, weights @ den
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)


def replicate_composite(bucket_values: FloatArray, bucket_weights: FloatArray) -> FloatArray:
    """(B,) composite per replicate from (B, buckets) values (NaN = undefined bucket)."""
    valid = ~np.isnan(bucket_values)
    w = np.where(valid, bucket_weights[None, :], 0.0)
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (np.nan_to_num(bucket_values) * w).sum(axis=1) / total, np.nan)


def percentile_ci(draws: FloatArray) -> tuple[float, float] | None:
    """Percentile 95% interval of the defined replicates; None when none is defined."""
    finite = draws[~np.isnan(draws)]
    if finite.size == 0:
        return None
    alpha = (1.0 - CI_LEVEL) / 2
    lo, hi = np.quantile(finite, [alpha, 1.0 - alpha])
    return float(lo), float(hi)
