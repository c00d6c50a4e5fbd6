"""Exact reductions for reported numbers: rationals until the end, one rounding to float.

Reported numbers must not depend on numpy's summation order or SIMD path, so the statistics built
on these helpers keep counts as integers and means as :class:`~fractions.Fraction` and round once
(``float(Fraction)`` divides two integers, which CPython rounds correctly). Where a value is
irrational (a standard deviation, Kendall's τ-b) the square root is taken of the exact rational,
correctly rounded (:func:`sqrt_ratio`), and sums of such floats use :func:`math.fsum`. Every result
is then a function of the data alone, whatever the CPU or library version.

The same discipline as ``exact.py`` (the paper conventions' bootstrap), whose type-7 quantile
position and interval levels these share; this module works on values that are exact already
(Fractions, integer sums), where ``exact.py`` locates order statistics among floats first.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from fractions import Fraction

from oracleproto.analysis.bootstrap import CI_QUANTILES
from oracleproto.analysis.exact import quantile_position

#: Bits kept below the leading bit before the one rounding to a double (53 + guard bits).
_SQRT_BITS = 60

#: The percentile interval's quantiles, exactly (2.5 % and 97.5 %), as the bootstrap defines them.
CI_LOW, CI_HIGH = CI_QUANTILES

Rational = Fraction | int


def total(values: Iterable[Rational]) -> Fraction:
    """The exact sum, over one common denominator: integer arithmetic instead of a Fraction
    addition (a gcd) per term, which was most of the time at leaderboard scale."""
    items = list(values)  # ints and Fractions both carry .numerator and .denominator
    common = math.lcm(1, *{v.denominator for v in items})
    return Fraction(sum(v.numerator * (common // v.denominator) for v in items), common)


def mean(values: Sequence[Rational]) -> Fraction | None:
    """The exact mean; None for no values."""
    if not values:
        return None
    return total(values) / len(values)


def float_mean(values: Sequence[float]) -> float | None:
    """The mean of floats: :func:`math.fsum` (exactly rounded, any order) over the count."""
    return math.fsum(values) / len(values) if values else None


def as_float(value: Rational | float | None) -> float | None:
    """``value`` rounded once to a double (None stays None)."""
    return None if value is None else float(value)


def sqrt_ratio(numerator: int, denominator: int) -> float:
    """√(numerator/denominator) correctly rounded to a double (both integers, the ratio ≥ 0).

    The integer square root is taken with ``_SQRT_BITS`` bits to spare and its last bit made
    sticky (round-to-odd), so the one conversion to float rounds as the exact root would.
    """
    if numerator < 0 or denominator <= 0:
        raise ValueError("sqrt_ratio needs numerator >= 0 and denominator > 0")
    if numerator == 0:
        return 0.0
    shift = max(0, (2 * _SQRT_BITS - numerator.bit_length() + denominator.bit_length()) // 2 + 1)
    scaled = (numerator << (2 * shift)) // denominator
    root = math.isqrt(scaled)
    if root * root * denominator != numerator << (2 * shift):
        root |= 1  # inexact: a sticky bit below the kept ones decides halfway cases correctly
    return math.ldexp(float(root), -shift)


def sample_sd(values: Sequence[Rational]) -> float | None:
    """Sample standard deviation (n − 1) of exact values, correctly rounded; None below 2 values."""
    if len(values) < 2:
        return None
    centre = mean(values)
    assert centre is not None
    square_sum = total((Fraction(v) - centre) ** 2 for v in values) / (len(values) - 1)
    return sqrt_ratio(square_sum.numerator, square_sum.denominator)


def quantile7(ordered: Sequence[Rational], p: Fraction) -> Fraction:
    """The ``p`` quantile of sorted exact values by linear interpolation (Hyndman–Fan type 7).

    Position h = (n − 1)·p: x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋ + 1] − x[⌊h⌋]) (numpy's default), exactly.
    """
    if not ordered:
        raise ValueError("quantile7 needs at least one value")
    j, g = quantile_position(len(ordered), p)
    low = Fraction(ordered[j])
    return low if g == 0 else low + g * (Fraction(ordered[j + 1]) - low)


def percentile_interval(values: Iterable[Rational]) -> tuple[Fraction, Fraction] | None:
    """The 2.5 % and 97.5 % type-7 quantiles of exact values; None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    return quantile7(ordered, CI_LOW), quantile7(ordered, CI_HIGH)
