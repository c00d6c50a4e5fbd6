"""Reductions whose result is a function of the data alone, not of numpy's version or the CPU.

A sum left to a library is evaluated in whatever order its kernel prefers: OpenBLAS picks a
matrix-product kernel per CPU (the Haswell and SkylakeX kernels round ``W @ x`` differently), and
numpy's pairwise summation is an implementation detail of a version. Most analysis numbers are
ratios of small integers, so their exact value often lies *on* a rounding boundary of the six
decimals ``summary.json`` keeps (the demo had a CI bound of exactly 0.5866875), where a one-ulp
difference flips the published digit. So the numbers the analysis reports are computed here:

* sums with :func:`math.fsum` (exactly rounded, independent of order), a mean as that sum divided by
  its count (one correctly rounded division);
* ratios of integer sums as :class:`~fractions.Fraction`, rounded once at the end;
* quantiles by one fixed definition (linear interpolation between order statistics, Hyndman–Fan
  type 7, numpy's default) evaluated exactly on the order statistics (:func:`quantile`,
  :func:`select_quantile`);
* logarithms by the C library's ``log``/``log2`` (numpy dispatches its own SIMD kernels per CPU).

An analysis revision before :data:`~oracleproto.analysis.revisions.EXACT_REDUCTIONS` computed these
with numpy; :func:`reductions_of` restores that for one analysis, so ``verify`` can re-score a run
published by it (docs/design/metrics.md, "Exact reductions").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from fractions import Fraction

import numpy as np
import numpy.typing as npt

from oracleproto.analysis.revisions import exact_reductions
from oracleproto.analysis.trials import FloatArray

#: True while an analysis of a revision before exact reductions runs (numpy's reductions).
_NUMPY_REDUCTIONS: ContextVar[bool] = ContextVar("oracleproto_numpy_reductions", default=False)

#: How far an order statistic of approximate values may be from the exact one, relative to the
#: largest magnitude: the approximations carry a few ulps (≈ 1e-15); this is a safe margin, and
#: values this close are compared exactly anyway.
_SELECT_MARGIN = 2.0**-30


@contextmanager
def reductions_of(revision: int) -> Iterator[None]:
    """Within the block, reduce as the analysis ``revision`` did (numpy before exact reductions)."""
    token = _NUMPY_REDUCTIONS.set(not exact_reductions(revision))
    try:
        yield
    finally:
        _NUMPY_REDUCTIONS.reset(token)


def numpy_reductions() -> bool:
    """Whether the current analysis reduces with numpy (a revision before exact reductions)."""
    return _NUMPY_REDUCTIONS.get()


def total(values: npt.ArrayLike) -> float:
    """The sum of ``values``: exactly rounded (numpy's pairwise sum for an older revision)."""
    array = np.asarray(values, dtype=np.float64)
    if _NUMPY_REDUCTIONS.get():
        return float(np.sum(array))
    return math.fsum(array.ravel().tolist())


def mean(values: npt.ArrayLike) -> float:
    """The mean of a non-empty ``values``: :func:`total` over the count (``numpy.mean`` before)."""
    array = np.asarray(values, dtype=np.float64)
    if _NUMPY_REDUCTIONS.get():
        return float(np.mean(array))
    return math.fsum(array.ravel().tolist()) / array.size


def fraction_sum(numerators: npt.ArrayLike, denominators: npt.ArrayLike) -> Fraction:
    """Exactly Σ numerators[i] / denominators[i] for integer arrays (denominators ≥ 1)."""
    num = np.asarray(numerators, dtype=np.int64).ravel()
    den = np.asarray(denominators, dtype=np.int64).ravel()
    if num.size == 0:
        return Fraction(0)
    # Few distinct denominators (option counts × samples): add the numerators of each first.
    distinct, where = np.unique(den, return_inverse=True)
    grouped = np.zeros(distinct.size, dtype=np.int64)
    np.add.at(grouped, where.ravel(), num)
    return sum((Fraction(int(a), int(d)) for a, d in zip(grouped, distinct, strict=True)), Fraction(0))


def decimal(value: float) -> Fraction:
    """A configured constant (a weight such as 0.15) as the decimal it is written as, exactly."""
    return Fraction(repr(value))


def _libm(function: Callable[[float], float], values: FloatArray) -> FloatArray:
    # The arguments are few distinct values (vote shares, stated probabilities): one call each.
    distinct, where = np.unique(values, return_inverse=True)
    mapped = np.asarray([_libm_value(function, v) for v in distinct.tolist()], dtype=np.float64)
    return np.asarray(mapped[where].reshape(values.shape), dtype=np.float64)


def _libm_value(function: Callable[[float], float], v: float) -> float:
    # numpy's conventions where the C library's Python binding raises: log 0 = −inf, log x<0 = NaN.
    if v > 0:
        return function(v)
    return -math.inf if v == 0 else math.nan


def log2(values: npt.ArrayLike) -> FloatArray:
    """Elementwise log2 (−inf at 0) by the C library (``numpy.log2`` for an older revision)."""
    array = np.asarray(values, dtype=np.float64)
    if _NUMPY_REDUCTIONS.get():
        return np.asarray(np.log2(array), dtype=np.float64)
    return _libm(math.log2, array)


def log(values: npt.ArrayLike) -> FloatArray:
    """Elementwise natural log (−inf at 0) by the C library (``numpy.log`` for an older revision)."""
    array = np.asarray(values, dtype=np.float64)
    if _NUMPY_REDUCTIONS.get():
        return np.asarray(np.log(array), dtype=np.float64)
    return _libm(math.log, array)


def quantile_position(count: int, p: Fraction) -> tuple[int, Fraction]:
    """Type-7 position of the ``p`` quantile among ``count`` sorted values: index j and weight g.

    The quantile is ``x[j] + g·(x[j+1] − x[j])`` (0-based), ``x[j]`` alone when g = 0.
    """
    h = (count - 1) * p
    j = math.floor(h)
    return j, h - j


def quantile(values: npt.ArrayLike, ps: Sequence[Fraction]) -> list[float]:
    """Type-7 quantiles of non-empty float ``values``, each exactly rounded from the order statistics.

    An older revision used ``numpy.quantile`` (the same definition, rounded along the way).
    """
    array = np.asarray(values, dtype=np.float64).ravel()
    if _NUMPY_REDUCTIONS.get():
        return [float(x) for x in np.quantile(array, [float(p) for p in ps])]
    ordered = np.sort(array)
    out = []
    for p in ps:
        j, g = quantile_position(ordered.size, p)
        low = Fraction(float(ordered[j]))
        value = low if g == 0 else low + g * (Fraction(float(ordered[j + 1])) - low)
        out.append(float(value))
    return out


def select_quantile(
    approx: FloatArray, exact: Callable[[int], Fraction], ps: Sequence[Fraction]
) -> list[float] | None:
    """Type-7 quantiles of values known exactly, exactly rounded; None when no value is defined.

    ``approx[i]`` is value i to a few ulps (NaN: undefined) and ``exact(i)`` its exact value. The
    order statistics are located on the approximations (a partition, no sort); only the values
    within a margin of one are evaluated exactly, which orders them correctly: an order statistic
    moves no further than the largest approximation error, so every value outside the margin lies
    on the same side of it exactly as approximately.
    """
    defined = np.flatnonzero(~np.isnan(approx))
    if defined.size == 0:
        return None
    values = approx[defined]
    positions = [quantile_position(defined.size, p) for p in ps]
    ranks = sorted({min(j + step, defined.size - 1) for j, _ in positions for step in (0, 1)})
    located = np.partition(values, ranks)
    margin = _SELECT_MARGIN * max(1.0, float(np.max(np.abs(values))))
    cache: dict[int, Fraction] = {}

    def statistic(k: int) -> Fraction:
        centre = float(located[k])
        below = int(np.count_nonzero(values < centre - margin))
        near = []
        for i in defined[np.abs(values - centre) <= margin].tolist():
            if i not in cache:
                cache[i] = exact(i)
            near.append(cache[i])
        near.sort()
        # ``below`` values are exactly smaller than all of ``near``, the rest exactly larger.
        return near[k - below]

    out = []
    for j, g in positions:
        low = statistic(j)
        out.append(float(low if g == 0 else low + g * (statistic(j + 1) - low)))
    return out
