"""Rank stability and Kendall's τ-b, with hand-computed values."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from oracleproto.analysis.ranks import competition_ranks, kendall_tau_b, rank_stability


def test_competition_ranks_share_the_best_rank_of_a_tie() -> None:
    assert competition_ranks([3, 5, 5, 1]) == [3, 1, 1, 4]
    assert competition_ranks([Fraction(1, 3), 0.25]) == [1, 2]
    assert competition_ranks([]) == []


def test_kendall_tau_b_by_hand() -> None:
    # Pairs (0,1) and (0,2) concordant, (1,2) discordant: (2 − 1)/3.
    assert kendall_tau_b([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3, abs=1e-15)
    # One pair tied in x: (2 − 0)/√((3 − 1)(3 − 0)) = 2/√6 = 0.816496580927726.
    assert kendall_tau_b([1, 2, 2], [1, 2, 3]) == pytest.approx(0.816496580927726, abs=1e-15)
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == -1.0
    assert kendall_tau_b([1, 1], [1, 2]) is None  # x is one tie: no untied pair
    assert kendall_tau_b([1], [1]) is None


def test_rank_stability_by_hand() -> None:
    """Point a 3 > b 2 > c 1; four replicates, one with a tie for first (both rank 1).

    r0 (3,2,1) → a1 b2 c3;  r1 (2,3,1) → a2 b1 c3;  r2 (3,3,1) → a1 b1 c3;  r3 (1,2,3) → a3 b2 c1.
    τ-b against (1,2,3): r0 1; r1 (2 − 1)/3; r2 2/√6 (one tie in the replicate); r3 −1.
    """
    stability = rank_stability(
        ["a", "b", "c"],
        {"a": 3, "b": 2, "c": 1},
        {"a": [3, 2, 3, 1], "b": [2, 3, 3, 2], "c": [1, 1, 1, 3]},
    )
    assert stability.point_rank == {"a": 1, "b": 2, "c": 3}
    assert stability.rank_counts == {"a": (2, 1, 1), "b": (2, 2, 0), "c": (1, 0, 3)}
    assert stability.p_rank("a", 1) == Fraction(1, 2)
    assert stability.p_rank("c", 1) == Fraction(1, 4)
    # Inverted CDF: a reaches 2.5 % at rank 1 (2/4) and 97.5 % only at rank 3; b reaches 100 % at 2.
    assert stability.rank_interval("a") == (1, 3)
    assert stability.rank_interval("b") == (1, 2)
    assert stability.rank_interval("c") == (1, 3)
    root6 = 2 / math.sqrt(6)
    assert stability.taus == pytest.approx((1.0, 1 / 3, root6, -1.0), abs=1e-15)
    tau = stability.tau_summary()
    assert tau["mean"] == pytest.approx((1 + 1 / 3 + root6 - 1) / 4, abs=1e-15)
    # Type 7 over (−1, 1/3, 2/√6, 1): h = 3/40 → −1 + 0.075·(4/3) = −0.9;
    # h = 117/40 → 2/√6 + 0.925·(1 − 2/√6).
    assert tau["ci"] == pytest.approx([-0.9, root6 + 0.925 * (1 - root6)], abs=1e-15)
    block = stability.as_dict()
    assert block["models"]["b"]["rank_distribution"] == [0.5, 0.5, 0.0]
    assert block["models"]["a"]["p_rank_1"] == 0.5


def test_rank_stability_leaves_out_replicates_with_an_undefined_model() -> None:
    stability = rank_stability(["a", "b"], {"a": 1, "b": 0}, {"a": [1, None, float("nan")], "b": [0, 1, 1]})
    assert stability.replicates == 1
    assert stability.rank_counts == {"a": (1, 0), "b": (0, 1)}
    with pytest.raises(ValueError, match="different numbers of replicates"):
        rank_stability(["a", "b"], {"a": 1, "b": 0}, {"a": [1, 2], "b": [1]})


def test_rank_stability_without_replicates() -> None:
    stability = rank_stability(["a"], {"a": 1}, {"a": []})
    assert stability.p_rank("a", 1) is None
    assert stability.rank_interval("a") is None
    assert stability.tau_summary() == {"mean": None, "ci": None, "replicates": 0}
