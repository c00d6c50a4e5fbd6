"""MC-multi selection diagnostics by hand: substitution, omission and commission told apart."""

from __future__ import annotations

from fractions import Fraction

from oracleproto.analysis.points_f1.panel import Outcome, Question, Trial
from oracleproto.analysis.points_f1.selection import selection_diagnostics
from oracleproto.analysis.trials import MC_MULTI, YES_NO

A, B, C, D = 1, 2, 4, 8


def ans(letters: int) -> Trial:
    return Trial(Outcome.ANSWER, letters)


def test_one_question_three_valid_answers_and_a_parse_failure() -> None:
    """Gold {A, C} of 4 (2 non-gold options). {A,B}: one swapped; {A}: one omitted; {A,B,C}: one extra."""
    q = Question("m", MC_MULTI, 4, A | C)
    out = selection_diagnostics([q], [[ans(A | B), ans(A), ans(A | B | C), Trial(Outcome.UNPARSED)]])
    assert (out["multi_slots"], out["valid_multi_slots"], out["valid_multi_questions"]) == (4, 3, 1)
    assert out["valid_multi_rate"] == Fraction(3, 4)
    assert out["precision"] == Fraction(13, 18)  # (1/2 + 1 + 2/3)/3
    assert out["recall"] == Fraction(2, 3)  # (1/2 + 1/2 + 1)/3
    assert out["f1"] == Fraction(59, 90)  # (15/30 + 20/30 + 24/30)/3
    assert out["false_positive_rate"] == Fraction(1, 3)  # (1/2 + 0 + 1/2)/3
    assert out["false_negative_rate"] == Fraction(1, 3)
    assert out["extra_count"] == out["missed_count"] == Fraction(2, 3)
    assert out["cardinality_bias"] == 0  # (0 − 1 + 1)/3
    assert out["overselect"] == out["underselect"] == Fraction(1, 3)
    assert out["same_size_wrong"] == Fraction(1, 3)
    assert out["mixed_error"] == out["omission_only"] == out["commission_only"] == Fraction(1, 3)
    assert out["exact"] == 0
    assert out["select_all_f1"] == Fraction(2, 3)  # 2·2/(4 + 2)


def test_question_mean_then_population_mean_and_undefined_fpr() -> None:
    """q1: answers {A,C} (exact) and {A}; q2 (every option gold): {A}. Single questions are ignored."""
    q1 = Question("m1", MC_MULTI, 4, A | C)
    q2 = Question("m2", MC_MULTI, 2, A | B)
    single = Question("y", YES_NO, 2, A)
    out = selection_diagnostics([q1, q2, single], [[ans(A | C), ans(A)], [ans(A)], [ans(B)]])
    # Recall: q1 mean (1 + 1/2)/2 = 3/4, q2 1/2 → (3/4 + 1/2)/2 = 5/8 (not the trial mean 2/3).
    assert out["recall"] == Fraction(5, 8)
    # FPR: q1 0; q2 has no non-gold option, so it is left out of the mean.
    assert out["false_positive_rate"] == 0
    assert out["fpr_questions"] == 1
    assert out["multi_slots"] == 3


def test_no_valid_multi_answer() -> None:
    q = Question("m", MC_MULTI, 3, A)
    out = selection_diagnostics([q], [[Trial(Outcome.UNPARSED)]])
    assert out["valid_multi_rate"] == 0
    assert out["precision"] is None
    assert selection_diagnostics([], [])["valid_multi_rate"] is None
