"""The shared, bucket-stratified bootstrap: intervals and tests whose values follow by hand."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from oracleproto.analysis.multiple import compare_pairs
from oracleproto.analysis.points_f1.resample import draw_indices, resamplable, shared_resamples


def test_every_resample_keeps_each_bucket_size() -> None:
    buckets = [0, 0, 0, 2, 3, 3]
    for row in draw_indices(buckets, 50, 7):
        drawn = Counter(buckets[i] for i in row)
        assert drawn == Counter(buckets)
        # Bucket by bucket, in bucket order: positions 0–2 from bucket 0, then 3, then 4–5.
        assert [buckets[i] for i in row] == sorted(buckets)


def test_resampling_needs_a_bucket_with_two_questions() -> None:
    assert not resamplable([0, 1, 2, 3], 2000)  # every resample would equal the data
    assert not resamplable([0, 0], 0)
    assert resamplable([0, 0], 1)


def test_two_questions_earning_0_and_1_give_the_whole_range() -> None:
    """Two yes/no questions, earned 0 and 1 (of 2 points): a replicate is 0, 50 or 100 with
    probability 1/4, 1/2, 1/4, so of 2000 the 2.5 % quantile is 0 and the 97.5 % one 100.
    Two models with the same answers: every difference is 0, its interval [0, 0], p = 1."""
    earned = {"a": [Fraction(0), Fraction(1)], "b": [Fraction(0), Fraction(1)]}
    shared = shared_resamples(earned, [1, 1], draw_indices([0, 0], 2000, 20261001))
    assert shared.score("a") == 50
    assert shared.score_interval("a") == (0.0, 100.0)
    assert shared.difference_interval("a", "b") == (0.0, 0.0)
    assert compare_pairs(["a", "b"], shared.sums)[0].test.p_value == 1


def test_a_model_better_on_every_question_has_the_smallest_p() -> None:
    earned = {"a": [Fraction(1), Fraction(1)], "b": [Fraction(0), Fraction(0)]}
    shared = shared_resamples(earned, [1, 1], draw_indices([0, 0], 2000, 1))
    assert shared.difference_interval("a", "b") == (100.0, 100.0)
    assert compare_pairs(["a", "b"], shared.sums)[0].test.p_value == Fraction(2, 2001)


def test_one_integer_scale_for_every_model() -> None:
    """Earned 1/3 and 2/7 points: scale lcm(3, 7) = 21, so the sums are 7 and 6, and a sum
    becomes a score through 100/(21·full points)."""
    shared = shared_resamples({"a": [Fraction(1, 3)], "b": [Fraction(2, 7)]}, [2], [[0], [0]])
    assert shared.point == {"a": 7, "b": 6}
    assert shared.unit == Fraction(100, 42)
    assert shared.score("a") == Fraction(50, 3)  # 100·(1/3)/2
    assert shared.sums == {"a": [7, 7], "b": [6, 6]}


def test_large_scales_fall_back_to_python_integers() -> None:
    """Earned 1/p and 1/q (primes 2^61 − 1, 2^31 − 1): scale p·q, scaled values q and p; two of
    them overflow int64, so the sums are Python integers: 2p and p + q, still exact."""
    p, q = 2**61 - 1, 2**31 - 1
    shared = shared_resamples({"a": [Fraction(1, p), Fraction(1, q)]}, [1, 1], [[1, 1], [0, 1]])
    assert shared.sums["a"] == [2 * p, p + q]
    # Type 7 at 39/40 between p + q and 2p, times 100/(p·q·2 points).
    upper = (p + q + Fraction(39, 40) * (p - q)) * Fraction(100, p * q * 2)
    assert shared.score_interval("a")[1] == float(upper)
