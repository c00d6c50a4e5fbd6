"""The cost-vs-score Pareto front, checked against the definition by hand.

A model is on the front iff no other model has a score at least as high and a cost at least as low,
one of the two strictly.
"""

from __future__ import annotations

import itertools
import random
from fractions import Fraction

from oracleproto.leaderboard.pareto import Number, pareto_front


def by_definition(points: dict[str, tuple[Number, Number]]) -> set[str]:
    """The front as the definition states it, pair by pair."""
    return {
        a
        for a, (cost_a, score_a) in points.items()
        if not any(
            (cost_b <= cost_a and score_b >= score_a) and (cost_b, score_b) != (cost_a, score_a)
            for b, (cost_b, score_b) in points.items()
            if b != a
        )
    }


def test_a_staircase_and_the_models_it_hides() -> None:
    points = {
        "cheap": (0.1, 40.0),  # cheapest: on the front whatever its score
        "mid": (0.5, 60.0),
        "dear": (2.0, 90.0),  # best score: on the front whatever its cost
        "worse-mid": (0.6, 55.0),  # mid is cheaper and better
        "same-cost-lower": (0.5, 59.0),  # mid: same cost, better score
        "same-score-dearer": (0.7, 60.0),  # mid: same score, cheaper
        "dearest": (3.0, 89.0),
    }
    assert pareto_front(points) == ["cheap", "mid", "dear"]  # cheapest first


def test_two_models_at_one_point_are_both_on_the_front() -> None:
    points = {"a": (1.0, 50.0), "b": (1.0, 50.0), "c": (2.0, 40.0)}
    assert pareto_front(points) == ["a", "b"]


def test_one_model_and_none() -> None:
    assert pareto_front({"only": (0.3, 10.0)}) == ["only"]
    assert pareto_front({}) == []


def test_equal_costs_are_ordered_by_score_and_fractions_work() -> None:
    # Same cost, different scores: only the better one is on the front.
    third = Fraction(1, 3)
    assert pareto_front({"lo": (third, Fraction(1, 2)), "hi": (third, Fraction(2, 3))}) == ["hi"]
    # A free model is on the front and hides every model that does not score better.
    points = {"free": (0, 30.0), "paid": (0.01, 30.0), "better": (0.01, 31.0)}
    assert pareto_front(points) == ["free", "better"]


def test_random_boards_agree_with_the_definition() -> None:
    rng = random.Random(29)
    for size in range(1, 9):
        for _ in range(40):
            # Few distinct values, so ties in cost, in score and in both are common.
            points = {f"m{i}": (rng.randint(0, 4) / 4, float(rng.randint(0, 4) * 10)) for i in range(size)}
            front = pareto_front(points)
            assert set(front) == by_definition(points)
            assert front == sorted(front, key=lambda m: (points[m][0], -points[m][1]))
            # The front is a staircase: cheaper along it means a lower score (or the same point).
            for a, b in itertools.pairwise(front):
                assert points[a][1] < points[b][1] or points[a] == points[b]
