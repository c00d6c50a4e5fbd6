"""Family B pieces on tables written by hand (make mutation found them untested; values worked on paper)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from tables_by_hand import ERR, table

from oracleproto.analysis import family_b as fb
from oracleproto.analysis.conventions import Convention

P, R = Convention.PAPER, Convention.REFERENCE_V4


@pytest.mark.parametrize(
    "raw",
    [
        {},
        "A",
        ["A"],
        {"AB": 0.5},
        {"Z": 0.5},
        {"C": 0.5},  # k = 2: only A and B exist, even with room for more letters
        {"A": 1.5},
        {"A": -0.1},
        {"A": "0.5"},
        {"A": True},
        {1: 0.5},
    ],
)
def test_what_is_not_a_belief_vector(raw: object) -> None:
    assert fb.belief_vector(raw, 2, 4) is None


def test_a_belief_vector() -> None:
    vec = fb.belief_vector({"B": 1, "A": 0.25}, 2, 4)
    assert vec is not None and vec.tolist() == [0.25, 1.0, 0.0, 0.0]


def test_the_fallback_vector_is_zero_beyond_k() -> None:
    vec = fb.fallback_vector(np.array([True, False, False, False, False]), 3)
    # 0.95 on the boxed letter, (1 − 0.95) / 2 on each other letter of the question, 0 beyond k.
    assert vec is not None and vec.tolist() == pytest.approx([0.95, 0.025, 0.025, 0.0, 0.0], abs=1e-15)
    assert vec.tolist()[3:] == [0.0, 0.0]
    assert fb.fallback_vector(np.array([True, True, True, False, False]), 3) is None
    assert fb.fallback_vector(np.array([False] * 5), 3) is None


def test_beliefs_skip_uncounted_trials_and_read_later_ones() -> None:
    t = table(
        [("yes_no", 2, "A")],
        [[ERR, "A", "B"]],
        width=2,
        belief_final=[[None, {"A": 0.7, "B": 0.3}, None]],
    )
    paper = fb.beliefs(t, P, protocol_on=True)
    assert paper.has.tolist() == [[False, True, False]]
    assert paper.p[0, 1].tolist() == [0.7, 0.3]
    # reference-v4 with the protocol off: a stored vector is used as such, a missing one falls back.
    ref = fb.beliefs(t, R, protocol_on=False)
    assert ref.has.tolist() == [[False, True, True]]
    assert ref.fallback.tolist() == [[False, False, True]]
    assert ref.p[0, 1].tolist() == [0.7, 0.3]
    assert ref.p[0, 2].tolist() == pytest.approx([0.05, 0.95])
    # paper with the protocol off: no family at all, whatever the table holds.
    assert not fb.beliefs(t, P, protocol_on=False).has.any()


def test_beliefs_without_any_stored_vector() -> None:
    t = table([("yes_no", 2, "A")], [["A", "B"]], width=2)
    ref = fb.beliefs(t, R, protocol_on=False)
    assert ref.fallback.tolist() == [[True, True]]
    assert ref.p[0].ravel().tolist() == pytest.approx([0.95, 0.05, 0.05, 0.95])
    assert not fb.beliefs(t, P, protocol_on=True).has.any()


def test_multi_answer_nll_ignores_letters_beyond_k() -> None:
    # k = 3 in a table 5 letters wide; gold {A, C}; belief A 0.5, B 0.5, C 0.5.
    t = table([("mc_multi", 3, "A,C")], [["A,C"]], width=5, belief_final=[[{"A": 0.5, "B": 0.5, "C": 0.5}]])
    b = fb.beliefs(t, P, protocol_on=True)
    scores = fb.trial_scores(t, b)
    # Each of the 3 labels has cross-entropy −ln 0.5; mean over k = 3 labels: ln 2.
    assert scores["nll"][0, 0] == pytest.approx(math.log(2))
    # BS_lab: (0.25 + 0.25 + 0.25) / 3.
    assert scores["bs_lab"][0, 0] == pytest.approx(0.25)


def test_per_question_means_cover_questions_with_a_vector_only() -> None:
    t = table(
        [("yes_no", 2, "A"), ("yes_no", 2, "A")],
        [["A", "A"], ["A", "A"]],
        width=2,
        belief_final=[[{"A": 0.8, "B": 0.2}, {"A": 0.6, "B": 0.4}], [None, None]],
    )
    b = fb.beliefs(t, P, protocol_on=True)
    result = fb.family_b(t, b, convention=P)
    # q0 only: BS_lab per trial 0.04 and 0.16 → 0.1; q1 has no vector and is left out.
    assert result["bs_lab"] == pytest.approx(0.1)
    assert result["brier_index"] == pytest.approx(100 * (1 - math.sqrt(0.1)))


def test_reference_v4_scores_the_mean_vector_of_a_question() -> None:
    t = table(
        [("yes_no", 2, "A"), ("yes_no", 2, "B")],
        [["A", "A"], ["B", ERR]],
        width=2,
        belief_final=[[{"A": 0.8, "B": 0.2}, {"A": 0.6, "B": 0.4}], [{"A": 0.3, "B": 0.7}, None]],
    )
    b = fb.beliefs(t, R, protocol_on=True)
    scores, defined = fb.mean_vector_scores(t, b)
    assert defined.tolist() == [True, True]
    # q0: mean vector (0.7, 0.3), gold A: ((0.7 − 1)² + 0.3²) / 2 = 0.09; q1: its one vector, gold B:
    # (0.3² + (0.7 − 1)²) / 2 = 0.09.
    assert scores["bs_lab"].tolist() == pytest.approx([0.09, 0.09])
    assert scores["mbs"].tolist() == pytest.approx([100 * (math.log2(0.7) + 1)] * 2)


def test_the_fallback_share_counts_questions() -> None:
    t = table(
        [("yes_no", 2, "A"), ("yes_no", 2, "A")],
        [["A", "A"], ["A", "B"]],
        width=2,
        belief_final=[[{"A": 0.9, "B": 0.1}, None], [None, None]],
    )
    b = fb.beliefs(t, R, protocol_on=False)
    # q0 has one stored vector (not all fallbacks), q1 only fallbacks: 1 question of 2.
    assert fb.family_b(t, b, convention=R)["fallback_question_share"] == 0.5


def test_the_paper_fallback_share_counts_questions_with_any_fallback() -> None:
    t = table(
        [("yes_no", 2, "A"), ("yes_no", 2, "A")],
        [["A", "A"], ["A", "B"]],
        width=2,
        belief_final=[[{"A": 0.9, "B": 0.1}, {"A": 0.8, "B": 0.2}], [{"A": 0.6, "B": 0.4}, None]],
    )
    b = fb.beliefs(t, R, protocol_on=False)
    # paper counts a question when any of its vectors is a fallback: q1 (its second trial), not q0.
    assert b.fallback.tolist() == [[False, False], [False, True]]
    assert fb.family_b(t, b, convention=P)["fallback_question_share"] == 0.5


def test_crowd_and_uniform_gammas() -> None:
    t = table([("mc_single", 4, "B"), ("yes_no", 2, "A")], [["B"], ["A"]], width=4)
    # Uniform predictor, k = 4, gold B: (3 · (1/4)² + (3/4)²) / 4 = (3/16 + 9/16) / 4 = 0.1875;
    # k = 2, gold A: ((1/2)² + (1/2)²) / 2 = 0.25.
    assert fb.gamma_uniform(t).tolist() == pytest.approx([0.1875, 0.25])
    others = [
        {"q0": np.array([0.1, 0.7, 0.1, 0.1])},
        {"q0": np.array([0.3, 0.5, 0.1, 0.1]), "q1": np.ones(3)},
    ]
    # q0's crowd (0.2, 0.6, 0.1, 0.1) against gold B: (0.04 + 0.16 + 0.01 + 0.01) / 4 = 0.055; q1's
    # only vector has 3 letters for k = 2, so q1 keeps the uniform 0.25.
    gamma, has = fb.crowd_vectors(t, others)
    assert gamma.tolist() == pytest.approx([0.055, 0.25])
    assert has.tolist() == [True, False]


def test_brier_indices() -> None:
    assert fb.brier_index(None) is None
    assert fb.brier_index(0.25) == 50.0
    assert fb.adjusted_brier_index(None) is None
    assert fb.adjusted_brier_index(0.25) == 50.0
    assert fb.adjusted_brier_index(-0.25) == 150.0
    assert fb.adjusted_brier_index(0.0) == 100.0
