"""Family A's per-question parts, entropy buckets and edge cases, each worked out by hand.

make mutation (group ``families``) left these untested: the per-question numerators and
denominators are read by the bootstraps directly (not only through the means that mask them), and
the entropy buckets' edge cases. The table (n = 3, five letters wide):

=====  =========  ==  ====  ==========================  =======================================
 q     bucket     k   gold  trials                      per question
=====  =========  ==  ====  ==========================  =======================================
 q0    yes_no     2   A     A, call error, cut          1 counted: exam 1, right 1, resolvable 1
 q1    mc_single  4   C     3 call errors               nothing counted
 q2    mc_multi   4   A,C   A, A+C, parse failure       3 counted: exam (½ + 1 + 0)/3, right 1,
                                                        resolvable 2
 q3    yes_no     2   B     2 parse failures, error     2 counted: exam 0, right 0, resolvable 0
=====  =========  ==  ====  ==========================  =======================================
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tables_by_hand import CUT, ERR, FAIL, table

from oracleproto.analysis import family_a as fa
from oracleproto.analysis.conventions import Convention

P, R = Convention.PAPER, Convention.REFERENCE_V4

T = table(
    [("yes_no", 2, "A"), ("mc_single", 4, "C"), ("mc_multi", 4, "A,C"), ("yes_no", 2, "B")],
    [["A", ERR, CUT], [ERR, ERR, ERR], ["A", "A,C", FAIL], [FAIL, FAIL, ERR]],
)


def ints(values: np.ndarray) -> list[int]:
    """The values of an integer array (the bootstraps' exact ratios need integers, not floats)."""
    assert values.dtype == np.int64
    return [int(v) for v in values]


def test_per_question_exam() -> None:
    value, defined = fa.per_question_exam(T)
    # q0 one counted trial, exact: 1/1; q1 nothing counted: 0 (and undefined); q2 1/2; q3 0/2.
    assert value.dtype == np.float64
    assert value.tolist() == [1.0, 0.0, 0.5, 0.0]
    assert defined.tolist() == [True, False, True, True]


def test_exam_parts() -> None:
    a, d, defined = fa.exam_parts(T)
    # a: true positives of exact counted trials (q2: A 1, A+C 2); d: max(m, 1) · max(counted, 1).
    assert ints(a) == [1, 0, 3, 0]
    assert ints(d) == [1 * 1, 1 * 1, 2 * 3, 1 * 2]
    assert defined.tolist() == [True, False, True, True]


def test_per_question_pass() -> None:
    # paper: right / counted per question, and 1 per question with a counted trial.
    num, den = fa.per_question_pass(T, P)
    assert num.tolist() == [1.0, 0.0, 1 / 3, 0.0]
    assert den.tolist() == [1.0, 0.0, 1.0, 1.0]
    # reference-v4: right and resolvable trials, pooled.
    num, den = fa.per_question_pass(T, R)
    assert num.tolist() == [1.0, 0.0, 1.0, 0.0]
    assert den.tolist() == [1.0, 0.0, 2.0, 0.0]


def test_pass_parts() -> None:
    hits, over, den = fa.pass_parts(T, P)
    assert (ints(hits), ints(over), ints(den)) == ([1, 0, 1, 0], [1, 1, 3, 2], [1, 0, 1, 1])
    # reference-v4: numerators over 1, each question weighing by its resolvable trials.
    hits, over, den = fa.pass_parts(T, R)
    assert (ints(hits), ints(over), ints(den)) == ([1, 0, 1, 0], [1, 1, 1, 1], [1, 0, 2, 0])


def test_pass_any_population_follows_the_convention() -> None:
    # paper: q0, q2, q3 have counted trials, q0 and q2 a right one: 2/3. reference-v4: q3 has no
    # resolvable trial, so q0 and q2 only: 1.
    assert fa.pass_any(T, P) == pytest.approx(2 / 3, rel=1e-15)
    assert fa.pass_any(T, R) == 1.0


def test_fleiss_categorical_without_items() -> None:
    # No item has 2 voters: no κ, and no contributing item.
    codes = np.array([[1, 2], [0, 3]])
    voters = np.array([[True, False], [False, False]])
    assert fa._fleiss_categorical(codes, voters) == (None, 0)


def test_fleiss_letters_stop_at_each_questions_options() -> None:
    # q0 (k = 5) splits 1:1 on E; q1 (k = 4, no option E) is unanimous on A and B.
    t = table([("mc_multi", 5, "A,E"), ("mc_multi", 4, "A,B")], [["A,E", "A"], ["A,B", "A,B"]])
    # Per letter: A unanimous (no κ); B q0 0 0, q1 1 1 → p_i 1, 1, p_e ½ → κ 1; C, D all 0 (no κ);
    # E q0 only (k > 4): 1 0 → p_i 0, p_e ½ → κ −1. Mean of (1, −1) over the 2 questions: 0.
    assert fa.fleiss_kappa(t, P) == 0.0


def test_tversky_without_any_label() -> None:
    # No true positive, no false positive, no gold label: 0 (no 0/0 computed along the way).
    assert fa.tversky(np.array([0, 1]), np.array([0, 0]), np.array([0, 0])).tolist() == [0.0, 1.0]


def test_tversky_chance_without_gold_labels() -> None:
    # m = 0: no pick can be a true positive, so the expected Tversky similarity is 0.
    assert fa.tversky_chance(3, 0) == 0.0


def test_a_unanimous_question_has_entropy_plus_zero() -> None:
    # −Σ p log p of one share 1 is −0.0 before the + 0.0; −0.0 would print as "-0.0" in JSON.
    t = table([("yes_no", 2, "A"), ("yes_no", 2, "A")], [["A", "A"], ["A", "B"]])
    h = fa.question_entropy(t, P)
    assert h.tolist() == [0.0, 1.0]
    assert math.copysign(1.0, float(h[0])) == 1.0


def test_entropy_buckets_without_population() -> None:
    t = table([("yes_no", 2, "A")], [[FAIL, ERR]])
    empty = {"accuracy": None, "questions": 0.0, "upper_entropy": None}
    assert fa.entropy_accuracy_buckets(t, P) == {"low": empty, "mid": empty, "high": empty}
    assert fa.entropy_accuracy_buckets(t, R) == {"low": empty, "mid": empty, "high": empty}


def test_paper_entropy_buckets_tell_letter_sets_apart() -> None:
    # paper votes by letter set: {A} and {A, B} are two categories, entropy 1 bit (by first letter
    # they would be one). Cut-points of the one value: 1, 1. Accuracy: A right, A+B wrong: ½.
    t = table([("yes_no", 2, "A")], [["A", "A,B"]])
    assert fa.entropy_accuracy_buckets(t, P) == {
        "low": {"accuracy": 0.5, "questions": 1.0, "upper_entropy": 1.0},
        "mid": {"accuracy": None, "questions": 0.0, "upper_entropy": 1.0},
        "high": {"accuracy": None, "questions": 0.0, "upper_entropy": None},
    }


def test_equal_count_buckets_order_by_entropy_at_full_precision() -> None:
    # n = 4: q0 A A B B (entropy 1, right 2), q1 A A A B (entropy 2 − ¾ log2 3 ≈ 0.811, right 3),
    # q2 A A A A with gold B (entropy 0, right 0). By entropy: q2, q1, q0 (rounded to whole bits
    # q1 would tie with q0 and come after it).
    t = table(
        [("yes_no", 2, "A"), ("yes_no", 2, "A"), ("yes_no", 2, "B")],
        [["A", "A", "B", "B"], ["A", "A", "A", "B"], ["A", "A", "A", "A"]],
    )
    h1 = 2 - 0.75 * math.log2(3)
    out = fa.entropy_accuracy_buckets(t, R)
    assert out["low"] == {"accuracy": 0.0, "questions": 1.0, "upper_entropy": 0.0}
    assert out["mid"]["accuracy"] == 0.75 and out["mid"]["questions"] == 1.0
    assert out["mid"]["upper_entropy"] == pytest.approx(h1, rel=1e-12)
    assert out["high"] == {"accuracy": 0.5, "questions": 1.0, "upper_entropy": 1.0}


def test_equal_count_buckets_keep_question_order_among_ties() -> None:
    # n = 2. q0–q3 split A B (entropy 1, right 1 of 2 each); q4–q8 unanimous A A (entropy 0), gold A
    # for q4–q6 (right 2), B for q7, q8 (right 0). Ordered by (entropy, question): q4 q5 q6 | q7 q8
    # q0 | q1 q2 q3. A sort that is not stable may put q7 or q8 among the first three.
    t = table(
        [("yes_no", 2, "A")] * 7 + [("yes_no", 2, "B")] * 2,
        [["A", "B"]] * 4 + [["A", "A"]] * 5,
    )
    out = fa.entropy_accuracy_buckets(t, R)
    assert out["low"] == {"accuracy": 1.0, "questions": 3.0, "upper_entropy": 0.0}
    assert out["mid"]["accuracy"] == pytest.approx(1 / 6, rel=1e-15)
    assert out["mid"]["upper_entropy"] == 1.0
    assert out["high"] == {"accuracy": 0.5, "questions": 3.0, "upper_entropy": 1.0}
