"""Per-question metrics by hand: a tie in the vote, ⊥ abstaining, K = 1, K = 3, incompleteness."""

from __future__ import annotations

from fractions import Fraction

import pytest

from oracleproto.analysis.points_f1.panel import Outcome, Question, Trial
from oracleproto.analysis.points_f1.question import score_question, strict_majority
from oracleproto.analysis.trials import MC_MULTI, MC_SINGLE, YES_NO

A, B, C = 1, 2, 4
UNPARSED = Trial(Outcome.UNPARSED)
YES = Question("y", YES_NO, 2, A)


def ans(letters: int) -> Trial:
    return Trial(Outcome.ANSWER, letters)


def test_a_tie_in_the_vote_gives_no_vote() -> None:
    """K = 4, votes A A B B: no set has more than 4/2, so no vote (coverage 0, credit 0)."""
    q = score_question(YES, [ans(A), ans(A), ans(B), ans(B)])
    assert q.vote is None
    assert (q.vote_coverage, q.vote_credit, q.vote_exact) == (0, 0, 0)
    assert q.exact_at_1 == Fraction(1, 2)
    assert q.pass_at_3 == 1  # 1 − C(2,3)/C(4,3)
    assert q.pass_all_at_3 == 0
    assert q.majority_correct_at_3 == Fraction(1, 2)  # C(2,2)·C(2,1)/C(4,3) = 2/4
    assert q.pairwise_agreement == Fraction(1, 3)  # AA and BB of the 6 pairs
    assert (q.valid_repeat_panel, q.all_same, q.all_same_wrong) == (1, 0, 0)
    assert q.credit_sd == pytest.approx(0.5773502691896257, abs=1e-15)  # √(1/3): credits 1 1 0 0


def test_two_way_tie_at_k2() -> None:
    assert strict_majority([A, B]) is None
    assert strict_majority([A, A]) == A


def test_unparsed_trials_abstain_but_stay_in_k() -> None:
    # A, ⊥, ⊥: one vote of three is not more than 3/2.
    assert score_question(YES, [ans(A), UNPARSED, UNPARSED]).vote is None
    q = score_question(YES, [ans(A), ans(A), UNPARSED])
    assert q.vote == A and q.vote_credit == 1  # two of three
    assert q.mean_credit == Fraction(2, 3)  # ⊥ earns 0 and stays in the denominator
    assert q.valid_repeat_panel == 0
    assert q.pairwise_agreement is None  # agreement only over a panel of valid answers
    assert (q.all_same, q.all_same_wrong) == (0, 0)


def test_refusal_scores_zero_and_keeps_the_question_complete() -> None:
    q = score_question(YES, [ans(A), Trial(Outcome.REFUSAL), ans(A)])
    assert q.complete
    assert q.credits == (1, 0, 1)
    assert q.vote == A


def test_k1() -> None:
    q = score_question(YES, [ans(A)])
    assert q.exact_at_1 == 1 and q.mean_credit == 1
    assert q.vote == A and q.vote_coverage == 1  # one vote of one is a strict majority
    assert (q.pass_at_3, q.pass_all_at_3, q.majority_correct_at_3) == (None, None, None)
    assert q.credit_sd is None
    assert (q.pairwise_agreement, q.valid_repeat_panel, q.all_same, q.all_same_wrong) == (None,) * 4


def test_k3_multi_answer() -> None:
    """Gold {A, C} of 4; trials {A,C}, {A}, {A,B,C}: credits 1, 2/3, 4/5."""
    q = score_question(Question("m", MC_MULTI, 4, A | C), [ans(A | C), ans(A), ans(A | B | C)])
    assert q.points == 3
    assert q.mean_credit == Fraction(37, 45)  # (15 + 10 + 12)/45
    assert q.exact == 1
    assert (q.pass_at_3, q.pass_all_at_3, q.majority_correct_at_3) == (1, 0, 0)
    assert q.vote is None  # three different sets
    assert (q.best_credit, q.worst_credit) == (1, Fraction(2, 3))
    assert q.random_credit == Fraction(37, 80)
    # Deviations 8/45, −7/45, −1/45: (64 + 49 + 1)/2025/2 = 57/2025, so √57/45.
    assert q.credit_sd == pytest.approx(57**0.5 / 45, abs=1e-15)


def test_all_same_wrong() -> None:
    q = score_question(Question("s", MC_SINGLE, 3, B), [ans(A), ans(A), ans(A)])
    assert (q.all_same, q.all_same_wrong, q.pairwise_agreement) == (1, 1, 1)
    assert q.vote == A and q.vote_credit == 0 and q.vote_coverage == 1


def test_missing_or_infrastructure_trial_makes_the_question_incomplete() -> None:
    q = score_question(YES, [ans(A), Trial(Outcome.MISSING), Trial(Outcome.INFRASTRUCTURE, error="network")])
    assert not q.complete
    assert q.incomplete == ("sample 1: missing", "sample 2: network")
    assert q.credits == ()
    assert q.random_credit == Fraction(1, 2)  # the baseline does not depend on the answers
