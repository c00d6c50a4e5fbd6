"""Question-cluster bootstrap, stratified by bucket, as one resample-count matrix.

Every statistic is a ratio of per-question sums, so a replicate is ``W @ x`` with ``W`` the
(B, Q) matrix of how often each question was drawn: all models and metrics share the same draws,
which also makes paired differences between models exact pairings.

The replicate sums are integer products (:class:`Replicates`): a per-question value is a ratio of
integers, brought to one denominator per column, so ``W @ x`` is exact whatever kernel multiplies
it, and the interval bounds are the exact type-7 quantiles, rounded once (``exact.py``). The float
functions below (``replicate_ratio`` …) are what analysis revisions before exact reductions used —
``W @ x`` in floating point, whose last bit depends on the CPU's BLAS kernel — kept so that
``verify`` can re-score a run they published.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import numpy.typing as npt

from oracleproto.analysis.exact import decimal, numpy_reductions, quantile, select_quantile
from oracleproto.analysis.trials import FloatArray, IntArray

CI_LEVEL = 0.95
#: Lower and upper quantile of the percentile interval, as exact fractions (1/40 and 39/40).
CI_QUANTILES = ((1 - decimal(CI_LEVEL)) / 2, (1 + decimal(CI_LEVEL)) / 2)
#: Integer sums stay below this in int64; a larger bound falls back to Python integers.
_INT64_BOUND = 2**62
#: Below this, every partial sum of an integer product is an integer a double holds exactly (with
#: room to spare under 2^53), so BLAS computes it exactly in any order, with or without FMA.
_FLOAT_EXACT_BOUND = 2**50


def resample_counts(strata: IntArray, samples: int, seed: int) -> IntArray:
    """(samples, Q) integer draw counts: within each stratum, questions resampled with replacement."""
    rng = np.random.default_rng(seed)
    counts = np.zeros((samples, len(strata)), dtype=np.int64)
    rows = np.arange(samples)[:, None]
    for stratum in np.unique(strata):
        members = np.flatnonzero(strata == stratum)
        draws = members[rng.integers(0, len(members), size=(samples, len(members)))]
        np.add.at(counts, (np.broadcast_to(rows, draws.shape), draws), 1)
    return counts


def resample_weights(strata: IntArray, samples: int, seed: int) -> FloatArray:
    """:func:`resample_counts` as floats (the same draws), for the float replicate functions."""
    return np.asarray(resample_counts(strata, samples, seed), dtype=np.float64)


@dataclass(frozen=True)
class RatioColumns:
    """Σ_c w_c·(Σ_q a/d)/(Σ_q den) over the columns whose Σ den > 0, divided by their Σ w_c.

    ``a``, ``d`` and ``den`` are (Q, C) integers (``d`` ≥ 1): the per-question value a/d and its
    weight den of column c. pass@1 is one column of weight 1; composite accuracy one per bucket.
    """

    a: IntArray
    d: IntArray
    den: IntArray
    weights: tuple[Fraction, ...]


@dataclass
class Replicates:
    """Every replicate of a :class:`RatioColumns` statistic under integer draw counts ``W``.

    ``top[r, c] / (scale[c]·bottom[r, c])`` is column c of replicate r, exactly: ``scale[c]`` is
    the common denominator of the column's a/d, so the sums are integer matrix products.
    """

    top: npt.NDArray[Any]
    bottom: npt.NDArray[Any]
    scale: tuple[int, ...]
    weights: tuple[Fraction, ...]
    approx: FloatArray = field(init=False)
    _sums: list[list[int]] | None = field(default=None, init=False, repr=False)
    _exact: dict[tuple[int, ...], Fraction] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.approx = _approximate(self.top, self.bottom, self.scale, self.weights)

    @classmethod
    def draw(cls, stat: RatioColumns, counts: IntArray) -> Replicates:
        """The replicates of ``stat`` under ``counts`` ((B, Q) draws; a row of ones: the point)."""
        scale = tuple(math.lcm(*np.unique(column).tolist()) for column in stat.d.T)
        rows = max(int(counts.sum(axis=1).max()) if counts.size else 0, 1)
        largest = max(abs(int(stat.a.max(initial=0))), abs(int(stat.a.min(initial=0))), 1)
        # |every partial sum| ≤ (draws per replicate) · (largest |value|).
        bound = max(largest * max(scale, default=1), int(np.abs(stat.den).max(initial=0))) * rows
        kind: Any = object if bound >= _INT64_BOUND else np.int64
        factors = np.asarray(scale, dtype=kind)[None, :] // stat.d.astype(kind)
        scaled = np.asarray(stat.a, dtype=kind) * factors
        den = np.asarray(stat.den, dtype=kind)
        if bound < _FLOAT_EXACT_BOUND:
            # Integers in doubles: BLAS's speed, and exact whatever its kernel or order.
            draws_f = np.asarray(counts, dtype=np.float64)
            top = (draws_f @ scaled.astype(np.float64)).astype(np.int64)
            return cls(top, (draws_f @ den.astype(np.float64)).astype(np.int64), scale, stat.weights)
        draws = np.asarray(counts, dtype=kind)
        return cls(draws @ scaled, draws @ den, scale, stat.weights)

    def sums(self, r: int) -> tuple[int, ...]:
        """Replicate ``r``'s integer sums (tops, then bottoms): equal sums, equal value."""
        if self._sums is None:
            self._sums = np.concatenate([self.top, self.bottom], axis=1).tolist()
        return tuple(self._sums[r])

    def exact(self, r: int) -> Fraction:
        """Replicate ``r``'s value, exactly (only for a defined replicate: ``approx[r]`` not NaN)."""
        key = self.sums(r)
        value = self._exact.get(key)
        if value is None:
            # Replicates of equal value are frequent (ties): computed once per distinct sums.
            value = self._exact[key] = self._value(key)
        return value

    def _value(self, sums: tuple[int, ...]) -> Fraction:
        # Integer numerator/denominator pairs, normalised once by Fraction (its arithmetic
        # normalises after every step, several times slower).
        width = len(self.weights)
        num, den, weight_num, weight_den = 0, 1, 0, 1
        for c, w in enumerate(self.weights):
            bottom = int(sums[width + c])
            if bottom > 0:
                term_num = w.numerator * int(sums[c])
                term_den = w.denominator * self.scale[c] * bottom
                num, den = num * term_den + term_num * den, den * term_den
                weight_num = weight_num * w.denominator + w.numerator * weight_den
                weight_den *= w.denominator
        return Fraction(num * weight_den, den * weight_num)


def _approximate(
    top: npt.NDArray[Any], bottom: npt.NDArray[Any], scale: tuple[int, ...], weights: tuple[Fraction, ...]
) -> FloatArray:
    """(B,) each replicate to a few ulps (NaN: no column defined), for ordering and plotting."""
    t, b = np.asarray(top, dtype=np.float64), np.asarray(bottom, dtype=np.float64)
    w = np.asarray([float(x) for x in weights], dtype=np.float64)
    defined = b > 0
    columns = t / np.where(defined, b * np.asarray(scale, dtype=np.float64), 1.0)
    used = np.where(defined, w[None, :], 0.0)
    norm = used.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 0, (columns * used).sum(axis=1) / norm, np.nan)


def exact_ci(approx: FloatArray, exact: Callable[[int], Fraction]) -> tuple[float, float] | None:
    """Percentile 95% interval of replicates known exactly (``exact(r)``), each bound rounded once."""
    bounds = select_quantile(approx, exact, CI_QUANTILES)
    return None if bounds is None else (bounds[0], bounds[1])


def replicate_ratio(weights: FloatArray, num: FloatArray, den: FloatArray) -> FloatArray:
    """(B, ...) float replicate values of sum(num)/sum(den); NaN where a replicate has no denominator."""
    top, bottom = weights @ num, weights @ den
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)


def replicate_composite(bucket_values: FloatArray, bucket_weights: FloatArray) -> FloatArray:
    """(B,) float composite per replicate from (B, buckets) values (NaN = undefined bucket)."""
    valid = ~np.isnan(bucket_values)
    w = np.where(valid, bucket_weights[None, :], 0.0)
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, (np.nan_to_num(bucket_values) * w).sum(axis=1) / total, np.nan)


def percentile_ci(draws: FloatArray) -> tuple[float, float] | None:
    """Percentile 95% interval of the defined float replicates; None when none is defined.

    The bounds are the exact type-7 quantiles of the draws, rounded once (``numpy.quantile`` at
    2.5 % and 97.5 % of an analysis revision before exact reductions).
    """
    finite = draws[~np.isnan(draws)]
    if finite.size == 0:
        return None
    if numpy_reductions():
        alpha = (1.0 - CI_LEVEL) / 2
        lo, hi = np.quantile(finite, [alpha, 1.0 - alpha])
        return float(lo), float(hi)
    lo, hi = quantile(finite, CI_QUANTILES)
    return lo, hi
