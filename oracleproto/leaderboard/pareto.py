"""The cost-vs-score Pareto front: the models no other beats on both cost and score."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

Number = float | Fraction


def pareto_front(points: Mapping[str, tuple[Number, Number]]) -> list[str]:
    """Models (keys of ``points``: ``(cost, score)``) that no other dominates, cheapest first.

    b dominates a when b costs no more and scores no less, and is strictly better in one of the
    two. Two models at the same point are both on the front (neither dominates the other).
    """
    front = [
        a
        for a, (cost_a, score_a) in points.items()
        if not any(
            cost_b <= cost_a and score_b >= score_a and (cost_b < cost_a or score_b > score_a)
            for b, (cost_b, score_b) in points.items()
            if b != a
        )
    ]
    return sorted(front, key=lambda m: (points[m][0], -points[m][1]))
