"""The contract's fixed parts: trial credit, the random baseline by enumeration, draw probabilities."""

from __future__ import annotations

from fractions import Fraction

import pytest

from oracleproto.analysis.points_f1.contract import (
    POINTS,
    draw_probabilities,
    random_credit,
    trial_credit,
)
from oracleproto.analysis.trials import BINARY, MC_MULTI, MC_SINGLE, YES_NO

A, B, C, D = 1, 2, 4, 8  # letter bit masks


def test_points_per_bucket() -> None:
    assert POINTS == {"yes_no": 1, "binary": 1, "mc_single": 2, "mc_multi": 3}


@pytest.mark.parametrize(
    ("pred", "expected"),
    [
        (None, Fraction(0)),  # ⊥ or a refusal
        (A | C, Fraction(1)),
        (A, Fraction(2, 3)),  # 2·1 / (1 + 2)
        (A | B | C, Fraction(4, 5)),  # 2·2 / (3 + 2)
        (B | D, Fraction(0)),
    ],
)
def test_multi_credit_is_f1(pred: int | None, expected: Fraction) -> None:
    assert trial_credit(pred, A | C, MC_MULTI) == expected


def test_single_buckets_need_the_exact_set() -> None:
    assert trial_credit(C, C, MC_SINGLE) == 1
    assert trial_credit(B | C, C, MC_SINGLE) == 0  # two letters boxed for one answer: wrong, not partial
    assert trial_credit(A, B, YES_NO) == 0
    assert trial_credit(None, B, BINARY) == 0


def test_random_single_is_one_over_k() -> None:
    assert random_credit(2, 1, YES_NO) == Fraction(1, 2)
    assert random_credit(4, 1, MC_SINGLE) == Fraction(1, 4)


def test_random_multi_by_enumerating_the_16_subsets() -> None:
    """Gold {A, C} of 4 options, each subset with probability 1/16; credit 2tp/(2 + tp + fp).

    tp = 0: {}, {B}, {D}, {B,D} → 0 (the empty set included: it earns nothing).
    tp = 1: fp = 0 ×2 → 2/3; fp = 1 ×4 → 1/2; fp = 2 ×2 → 2/5.
    tp = 2: {A,C} → 1; fp = 1 ×2 → 4/5; {A,B,C,D} → 2/3.
    Σ = 4/3 + 2 + 4/5 + 1 + 8/5 + 2/3 = 37/5, so the expectation is 37/80.
    """
    assert random_credit(4, 2, MC_MULTI) == Fraction(37, 80)


def test_random_multi_small_cases() -> None:
    # Gold {A} of 2: {} 0, {A} 1, {B} 0, {A,B} 2/3 → (5/3)/4.
    assert random_credit(2, 1, MC_MULTI) == Fraction(5, 12)
    # Gold {A,B} of 2: {} 0, {A} 2/3, {B} 2/3, {A,B} 1 → (7/3)/4.
    assert random_credit(2, 2, MC_MULTI) == Fraction(7, 12)


def test_draw_probabilities_without_replacement() -> None:
    # K = 5, c = 2 (trials A A B B B, gold A): 1 − C(3,3)/C(5,3) = 9/10; C(2,3) = 0;
    # majority: C(2,2)·C(3,1)/10 = 3/10.
    assert draw_probabilities(5, 2) == (Fraction(9, 10), Fraction(0), Fraction(3, 10))
    # K = 3: the three trials themselves.
    assert draw_probabilities(3, 2) == (1, 0, 1)
    assert draw_probabilities(3, 1) == (1, 0, 0)
    assert draw_probabilities(3, 3) == (1, 1, 1)
    assert draw_probabilities(3, 0) == (0, 0, 0)


def test_draw_probabilities_need_three_trials() -> None:
    assert draw_probabilities(1, 1) is None
    assert draw_probabilities(2, 2) is None
