"""Paired-bootstrap p-values, Holm and Benjamini–Hochberg, with hand-computed values."""

from __future__ import annotations

from fractions import Fraction

import pytest

from oracleproto.analysis.multiple import (
    benjamini_hochberg,
    compare_pairs,
    holm,
    paired_p_value,
    sensitivity,
)

#: Benjamini & Hochberg (1995), "Controlling the false discovery rate: a practical and powerful
#: approach to multiple testing", JRSS B 57(1):289–300, section 4.1: the 15 ordered p-values of
#: the thrombolysis study of Neuhaus et al. (1992). At q = 0.05 their procedure rejects the four
#: smallest (0.0095 ≤ 4/15·0.05 = 0.01333; 0.0201 > 5/15·0.05 = 0.01667, and no later p_(i)
#: is ≤ i/300), while the Bonferroni-type procedures reject three.
BH_1995 = tuple(
    Fraction(p)
    for p in (
        "0.0001",
        "0.0004",
        "0.0019",
        "0.0095",
        "0.0201",
        "0.0278",
        "0.0298",
        "0.0344",
        "0.0459",
        "0.3240",
        "0.4262",
        "0.5719",
        "0.6528",
        "0.7590",
        "1.000",
    )
)


def test_benjamini_hochberg_on_the_1995_table() -> None:
    """Adjusted p̃_(i) = min_{j ≥ i} 15·p_(j)/j, by hand (e.g. p̃_(6) = min(0.0695, 0.063857) )."""
    adjusted = benjamini_hochberg(BH_1995)
    expected = [
        Fraction("0.0015"),  # 15 · 0.0001 / 1
        Fraction("0.003"),  # 15 · 0.0004 / 2
        Fraction("0.0095"),  # 15 · 0.0019 / 3
        Fraction("0.035625"),  # 15 · 0.0095 / 4
        Fraction("0.0603"),  # 15 · 0.0201 / 5
        Fraction("0.0298") * 15 / 7,  # 0.063857…: the step-up carries rank 7's value down to rank 6
        Fraction("0.0298") * 15 / 7,
        Fraction("0.0344") * 15 / 8,  # 0.0645
        Fraction("0.0459") * 15 / 9,  # 0.0765
        Fraction("0.486"),  # 15 · 0.3240 / 10
        Fraction("0.4262") * 15 / 11,
        Fraction("0.714875"),  # 15 · 0.5719 / 12
        Fraction("0.6528") * 15 / 13,
        Fraction("0.7590") * 15 / 14,
        Fraction(1),
    ]
    assert adjusted == expected
    assert [p <= Fraction(1, 20) for p in adjusted] == [True] * 4 + [False] * 11


def test_holm_on_the_1995_table() -> None:
    """p̃_(i) = max_{j ≤ i} min(1, (16 − j)·p_(j)): rejects three (0.114 > 0.05 at rank 4)."""
    adjusted = holm(BH_1995)
    expected = [
        Fraction("0.0015"),  # 15 · 0.0001
        Fraction("0.0056"),  # 14 · 0.0004
        Fraction("0.0247"),  # 13 · 0.0019
        Fraction("0.114"),  # 12 · 0.0095
        Fraction("0.2211"),  # 11 · 0.0201
        Fraction("0.278"),  # 10 · 0.0278
        Fraction("0.278"),  # 9 · 0.0298 = 0.2682 < 0.278: the running maximum
        Fraction("0.278"),  # 8 · 0.0344 = 0.2752
        Fraction("0.3213"),  # 7 · 0.0459
        *[Fraction(1)] * 6,  # 6 · 0.3240 = 1.944, capped
    ]
    assert adjusted == expected
    assert sum(p <= Fraction(1, 20) for p in adjusted) == 3


def test_adjustments_keep_the_input_order() -> None:
    shuffled = [Fraction(3, 100), Fraction(1, 100), Fraction(2, 100)]
    # Sorted 0.01, 0.02, 0.03. Holm: 0.03, max(0.03, 0.04), max(0.04, 0.03) → in input order 0.04, 0.03, 0.04.
    assert holm(shuffled) == [Fraction(4, 100), Fraction(3, 100), Fraction(4, 100)]
    # BH: 3·0.03/3 = 0.03, 3·0.02/2 = 0.03, 3·0.01/1 = 0.03.
    assert benjamini_hochberg(shuffled) == [Fraction(3, 100)] * 3
    assert holm([]) == benjamini_hochberg([]) == []


def test_paired_p_value_counts_both_tails_with_the_plus_one() -> None:
    # Δ* = 2, 2, 2, 2, −1: one replicate ≤ 0, four ≥ 0 → p = 2·(1 + 1)/(5 + 1) = 2/3.
    test = paired_p_value([3, 3, 3, 3, 3], [1, 1, 1, 1, 4])
    assert (test.replicates, test.at_most_zero, test.at_least_zero) == (5, 1, 4)
    assert test.p_value == Fraction(2, 3)
    # Every Δ* > 0: p = 2·(1 + 0)/(4 + 1) = 2/5, never 0.
    assert paired_p_value([1, 1, 1, 1], [0, 0, 0, 0]).p_value == Fraction(2, 5)
    # Identical models: every Δ* = 0 counts on both sides, p = min(1, 2·5/4) = 1.
    assert paired_p_value([Fraction(1, 3)] * 3, [Fraction(1, 3)] * 3).p_value == 1


def test_paired_p_value_skips_undefined_replicates() -> None:
    test = paired_p_value([1.0, None, float("nan"), 2.0], [0.0, 1.0, 1.0, 0.0])
    assert test.replicates == 2
    assert test.p_value == Fraction(2, 3)  # 2·(1 + 0)/(2 + 1)
    assert paired_p_value([None], [1]).p_value is None
    with pytest.raises(ValueError, match="differ in length: 2 and 1"):
        paired_p_value([1, 2], [1])


def test_compare_pairs_adjusts_over_the_pairs_with_a_value() -> None:
    replicates = {"a": [3, 3, 3, 3], "b": [1, 1, 1, 1], "c": [None, None, None, None]}
    pairs = compare_pairs(["a", "b", "c"], replicates)
    assert [(p.a, p.b) for p in pairs] == [("a", "b"), ("a", "c"), ("b", "c")]
    ab = pairs[0]
    assert ab.test.p_value == Fraction(2, 5)  # a one-member family: no adjustment
    assert ab.p_holm == ab.p_bh == Fraction(2, 5)
    assert ab.significant_bh is False and ab.significant_holm is False
    assert pairs[1].p_holm is None and pairs[1].significant_bh is None
    line = sensitivity(pairs)
    assert line["pairs"] == 1
    assert line["line"] == "0 of 1 pairs significant under Holm, 0 under Benjamini–Hochberg (both at 0.05)"
