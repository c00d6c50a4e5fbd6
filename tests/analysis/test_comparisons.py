"""Pairwise tests and ranks of any convention's headline metric, from the paper bootstrap's replicates."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from oracleproto.analysis.bootstrap import RatioColumns, Replicates
from oracleproto.analysis.comparisons import exact_replicates, headline_comparisons

#: Three resamples of two questions: both draws of q1, one of each, both of q2.
COUNTS = np.asarray([[2, 0], [1, 1], [0, 2]], dtype=np.int64)


def _replicates(a: list[int], den: list[int]) -> Replicates:
    """A pass@1-like statistic: Σ a / Σ den over the drawn questions (one column, weight 1)."""
    column = np.asarray(a, dtype=np.int64)[:, None]
    stat = RatioColumns(
        column, np.ones_like(column), np.asarray(den, dtype=np.int64)[:, None], (Fraction(1),)
    )
    return Replicates.draw(stat, COUNTS)


def test_exact_replicates_with_an_undefined_one() -> None:
    # x right on q1 only: 2/2, 1/2, 0/2. z has q2 undefined (den 0): 1/1 … 1/1, and 0/0 in r2.
    assert exact_replicates(_replicates([1, 0], [1, 1])) == [1, Fraction(1, 2), 0]
    assert exact_replicates(_replicates([1, 0], [1, 0])) == [1, 1, None]


def test_headline_comparisons_by_hand() -> None:
    """x: 1, 1/2, 0; y: 0, 0, 0. Δ = 1, 1/2, 0: one replicate ≤ 0 and three ≥ 0, so
    p = 2·(1 + 1)/(3 + 1) = 1. Ranks: x first in all three (tied with y in r2), y first once."""
    block = headline_comparisons(
        ["x", "y", "w"],
        {"x": 0.5, "y": 0.0, "w": None},
        {
            "x": exact_replicates(_replicates([1, 0], [1, 1])),
            "y": exact_replicates(_replicates([0, 0], [1, 1])),
        },
        metric="pass_at_1_avg",
    )
    assert block["models"] == ["x", "y"]  # w has no point value
    (pair,) = block["pairs"]
    assert (pair["a"], pair["b"], pair["replicates"], pair["p_value"]) == ("x", "y", 3, 1.0)
    assert pair["significant_bh"] is False
    ranks = block["ranks"]["models"]
    assert ranks["x"]["p_rank_1"] == 1.0
    assert ranks["y"]["p_rank_1"] == 1 / 3
    assert ranks["y"]["rank_ci"] == [1, 2]
