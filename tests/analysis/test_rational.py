"""Exact helpers: correctly rounded square roots, exact quantiles and standard deviations."""

from __future__ import annotations

from fractions import Fraction

import pytest

from oracleproto.analysis.rational import (
    mean,
    percentile_interval,
    quantile7,
    sample_sd,
    sqrt_ratio,
)


def test_sqrt_ratio_is_exact_on_squares_and_correctly_rounded_elsewhere() -> None:
    assert sqrt_ratio(9, 4) == 1.5
    assert sqrt_ratio(0, 7) == 0.0
    assert sqrt_ratio(2, 1) == 1.4142135623730951  # √2 to 17 significant digits, the nearest double
    assert sqrt_ratio(1, 3) == 0.5773502691896257  # 1/√3 = 0.57735026918962576…, the nearest double
    # 10^40 + 1 is not a square: its root 10^20 + 5·10^-21 rounds to the double nearest 10^20.
    assert sqrt_ratio(10**40 + 1, 1) == 1e20
    with pytest.raises(ValueError, match="numerator >= 0"):
        sqrt_ratio(-1, 1)


def test_sample_sd_and_mean_are_exact() -> None:
    assert mean([Fraction(1, 3), Fraction(2, 3), 1]) == Fraction(2, 3)
    assert mean([]) is None
    # 1, 1, 0: mean 2/3, squared deviations 1/9 + 1/9 + 4/9 = 2/3, over 2 = 1/3.
    assert sample_sd([1, 1, 0]) == 0.5773502691896257
    assert sample_sd([5]) is None


def test_quantile7_interpolates_exactly() -> None:
    assert quantile7([0, 10], Fraction(1, 4)) == Fraction(5, 2)
    # 2000 values 0…1999: h = 1999/40 = 49.975 → 49 + 0.975·1.
    assert quantile7(list(range(2000)), Fraction(1, 40)) == Fraction(49975, 1000)
    assert percentile_interval([3, 1, 2]) == (Fraction(1) + Fraction(1, 20), Fraction(3) - Fraction(1, 20))
    assert percentile_interval([]) is None
