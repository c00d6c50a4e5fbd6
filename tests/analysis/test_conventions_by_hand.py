"""One built run under all three conventions (issue 29, "Done when"), every value worked out by hand.

Six questions: y1 yes/no gold A, y2 yes/no gold B, b1 binary gold A, s1 MC-single of 3 gold C,
m1 MC-multi of 3 gold {A}, m2 MC-multi of 4 gold {A, C}. ⊥ is a parse failure, ERR a call error
(rate_limit), EMPTY a slot never written. K = n = 3:

=====  ==================  ==================  ==========  ==================  ==========  ==============
model  y1                  y2                  b1          s1                  m1          m2
=====  ==================  ==================  ==========  ==================  ==========  ==============
FULL   A A B               B ⊥ A               A A A       C A B               A, AB, A    A, A, AC
GAPS   A ERR EMPTY         B B B               A A A       ERR ERR ERR         A A A       AC, AC, A
=====  ==================  ==================  ==========  ==================  ==========  ==============

Ties in the vote: FULL's y2 (B against A, ⊥ does not vote) and s1 (C, A, B). Incomplete questions:
GAPS' y1 (a call error and an unwritten slot) and s1 (call errors only: no counted trial at all).
K = 1 takes each model's first trial of every question.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from builder import EMPTY, ERR, FAIL, Q, RunSpec, T, ok, write_run

from oracleproto.analysis import family_a as fa
from oracleproto.analysis.conventions import Convention
from oracleproto.analysis.points_f1 import analyze_points_f1
from oracleproto.analysis.points_f1.contract import random_credit
from oracleproto.analysis.reader import RunData, read_run
from oracleproto.analysis.report import analyze
from oracleproto.analysis.trials import MC_MULTI

FULL, GAPS = "vendor-a/full::r5::c4", "vendor-b/gaps::r5::c4"
QUESTIONS = (
    Q("y1", "yes_no", "single", ("Yes", "No"), "A"),
    Q("y2", "yes_no", "single", ("Yes", "No"), "B"),
    Q("b1", "binary_named", "single", ("Red", "Blue"), "A"),
    Q("s1", "multiple_choice", "single", ("x", "y", "z"), "C"),
    Q("m1", "multiple_choice", "multi", ("x", "y", "z"), "A"),
    Q("m2", "multiple_choice", "multi", ("w", "x", "y", "z"), "A, C"),
)
TRIALS: dict[str, dict[str, list[T]]] = {
    FULL: {
        "y1": [ok("A"), ok("A"), ok("B")],
        "y2": [ok("B"), FAIL, ok("A")],
        "b1": [ok("A")] * 3,
        "s1": [ok("C"), ok("A"), ok("B")],
        "m1": [ok("A"), ok("A,B"), ok("A")],
        "m2": [ok("A"), ok("A"), ok("A,C")],
    },
    GAPS: {
        "y1": [ok("A"), ERR, EMPTY],
        "y2": [ok("B")] * 3,
        "b1": [ok("A")] * 3,
        "s1": [ERR] * 3,
        "m1": [ok("A")] * 3,
        "m2": [ok("A,C"), ok("A,C"), ok("A")],
    },
}
F = Fraction


def composite(*parts: tuple[str, Fraction]) -> float:
    """Composite accuracy from (weight as written, exact bucket mean) pairs, as published: each
    bucket mean rounded once to a double, weighted exactly, rounded once (docs/design/metrics.md, "Exact
    reductions"), so the value can be recomputed from the published ``exam_avg``."""
    total = sum((F(w) * F(float(mean)) for w, mean in parts), F(0))
    return float(total / sum(F(w) for w, _ in parts))


def _run(root: Path, n: int) -> RunData:
    models = {m: {q: trials[:n] for q, trials in by_q.items()} for m, by_q in TRIALS.items()}
    return read_run(write_run(root, RunSpec(n=n, models=models, questions=QUESTIONS)))


@pytest.fixture(scope="module")
def k3(tmp_path_factory: pytest.TempPathFactory) -> RunData:
    return _run(tmp_path_factory.mktemp("k3"), 3)


@pytest.fixture(scope="module")
def k1(tmp_path_factory: pytest.TempPathFactory) -> RunData:
    return _run(tmp_path_factory.mktemp("k1"), 1)


def test_paper_k3(k3: RunData) -> None:
    v = analyze(k3, Convention.PAPER, bootstrap_samples=0).models[FULL]
    # Hit rates over counted trials (⊥ counted as a miss): 2/3, 1/3, 1, 1/3, 2/3, 1/3 → (10/3)/6.
    assert v["pass_at_1_avg"] == float(F(5, 9))
    assert (v["pass_any_at_n"], v["pass_all_at_n"]) == (1.0, float(F(1, 6)))  # only b1 right three times
    # Ties: y2 (B 1, A 1) and s1 (1 each) dropped; votes y1 A ✓, b1 A ✓, m1 {A} ✓, m2 {A} ✗.
    assert v["majority_vote_accuracy"] == 0.75
    # 7/36, as the difference of the two published values (docs/design/metrics.md, "Exact reductions").
    assert v["majority_vote_gain"] == 0.75 - float(F(5, 9))
    # Exam means: y1 2/3, y2 1/3 → 1/2; b1 1; pooled MC s1 1/3, m1 2/3 (the AB trial has a false
    # positive), m2 (1/2 + 1/2 + 1)/3 = 2/3 → 5/9. 0.15·1/2 + 0.15·1 + 0.70·5/9 = 221/360.
    assert v["composite_accuracy"] == composite(("0.15", F(1, 2)), ("0.15", F(1)), ("0.70", F(5, 9)))
    assert v["composite_accuracy"] == pytest.approx(221 / 360, abs=1e-15)


def test_reference_v4_k3(k3: RunData) -> None:
    v = analyze(k3, Convention.REFERENCE_V4, bootstrap_samples=0).models[FULL]
    # Pooled over the 17 resolvable trials (y2's ⊥ leaves both sides): 2+1+3+1+2+1 = 10 right.
    assert v["pass_at_1_avg"] == float(F(10, 17))
    assert (v["pass_any_at_n"], v["pass_all_at_n"]) == (1.0, float(F(1, 6)))
    assert v["majority_vote_accuracy"] == 0.75  # the same ties dropped
    assert v["majority_vote_gain"] == 0.75 - float(F(10, 17))  # against its own pass@1: 11/68
    # Four buckets: yes/no 1/2, binary 1, MC-single 1/3, MC-multi (2/3 + 2/3)/2 = 2/3:
    # 0.15/2 + 0.15 + 0.28/3 + 0.42·2/3 = (45 + 90 + 56 + 168)/600.
    parts = (("0.15", F(1, 2)), ("0.15", F(1)), ("0.28", F(1, 3)), ("0.42", F(2, 3)))
    assert v["composite_accuracy"] == composite(*parts)
    assert v["composite_accuracy"] == pytest.approx(359 / 600, abs=1e-15)


def test_points_f1_k3(k3: RunData) -> None:
    result = analyze_points_f1(k3, iterations=0)
    v = result.summaries[FULL]
    # Points 1, 1, 1, 2, 3, 3 (Σ 11). Mean credits y1 2/3, y2 1/3, b1 1, s1 1/3,
    # m1 (1 + 2/3 + 1)/3 = 8/9 ({A,B} against {A}: F1 = 2/(2 + 1)), m2 (2/3 + 2/3 + 1)/3 = 7/9.
    # Earned 2/3 + 1/3 + 1 + 2/3 + 8/3 + 7/3 = 23/3 of 11.
    assert v["score"] == F(2300, 33)
    assert v["exact_at_1"] == F(5, 9)  # (2/3 + 1/3 + 1 + 1/3 + 2/3 + 1/3)/6
    # K = 3: the three trials themselves. Any exact everywhere; all exact only b1; ≥ 2 exact y1 b1 m1.
    assert (v["pass_at_3"], v["pass_all_at_3"], v["majority_correct_at_3"]) == (1, F(1, 6), F(1, 2))
    # Strict majority of all 3: y2 (B, ⊥, A) and s1 have none (credit 0, kept); y1 A, b1 A,
    # m1 {A} right; m2 {A} earns its F1 2/3. (1 + 0 + 1 + 0 + 3 + 3·2/3)/11.
    assert v["vote_score"] == F(700, 11)
    assert (v["vote_coverage"], v["vote_exact"]) == (F(2, 3), F(1, 2))
    # Random: 1/2 ×3, s1 1/3 ×2 points, m1 17/48 ×3 (below), m2 37/80 ×3:
    # (360 + 160 + 255 + 333)/240 = 277/60 of 11 points.
    assert v["random_score"] == F(27700, 660)


def test_points_f1_incomplete_question(k3: RunData) -> None:
    result = analyze_points_f1(k3, iterations=0)
    assert result.summaries[GAPS]["score"] is None and result.compared == (FULL,)
    reason = result.no_score[GAPS]
    assert reason.startswith("2 of 6 question(s) incomplete: ")
    assert "y1 (sample 1: rate_limit, sample 2: missing)" in reason
    assert result.summaries[GAPS]["complete_questions"] == 4


def test_the_incomplete_question_under_the_paper_conventions(k3: RunData) -> None:
    paper = analyze(k3, Convention.PAPER, bootstrap_samples=0).models[GAPS]
    # s1 has no counted trial: out of every mean. y1 keeps its one counted trial (right).
    # Hit rates y1 1, y2 1, b1 1, m1 1, m2 2/3 over 5 questions.
    assert paper["pass_at_1_avg"] == float(F(14, 15))
    # yes/no 1, binary 1, pooled MC (m1 1, m2 (1 + 1 + 1/2)/3 = 5/6) → 11/12: 0.3 + 0.70·11/12.
    assert paper["composite_accuracy"] == composite(("0.15", F(1)), ("0.15", F(1)), ("0.70", F(11, 12)))
    assert paper["composite_accuracy"] == pytest.approx(113 / 120, abs=1e-15)
    # 4 call errors among the 17 written trials (the unwritten slot is no trial).
    assert paper["error_rate"] == float(F(4, 17)) and paper["evaluability_rate"] == 1.0
    reference = analyze(k3, Convention.REFERENCE_V4, bootstrap_samples=0).models[GAPS]
    assert reference["pass_at_1_avg"] == float(F(12, 13))  # 12 right of 13 resolvable
    # No MC-single bucket: yes/no, binary, MC-multi renormalised over 0.72: (0.3 + 0.42·11/12)/0.72.
    parts = (("0.15", F(1)), ("0.15", F(1)), ("0.42", F(11, 12)))
    assert reference["composite_accuracy"] == composite(*parts)
    assert reference["composite_accuracy"] == pytest.approx(137 / 144, abs=1e-15)
    assert reference["error_rate"] == float(F(4, 17))


def test_k1_under_all_three(k1: RunData) -> None:
    """First trials: FULL answers y1 A, y2 B, b1 A, s1 C, m1 {A} right and m2 {A} (exam 1/2, F1 2/3)."""
    paper = analyze(k1, Convention.PAPER, bootstrap_samples=0).models[FULL]
    assert paper["pass_at_1_avg"] == paper["pass_any_at_n"] == paper["pass_all_at_n"] == float(F(5, 6))
    assert paper["majority_vote_accuracy"] == float(F(5, 6))  # the vote is the one answer
    assert paper["majority_vote_gain"] == 0.0
    reference = analyze(k1, Convention.REFERENCE_V4, bootstrap_samples=0).models[FULL]
    assert reference["majority_vote_gain"] is None  # a vote needs two samples there
    result = analyze_points_f1(k1, iterations=0)
    v = result.summaries[FULL]
    assert v["score"] == F(1000, 11)  # (1 + 1 + 1 + 2 + 3 + 3·2/3)/11
    assert (v["pass_at_3"], v["pass_all_at_3"], v["majority_correct_at_3"]) == (None, None, None)
    assert v["vote_score"] == v["score"] and v["vote_coverage"] == 1
    assert v["credit_sd"] is None and v["pairwise_agreement"] is None
    # GAPS' first trials: s1 is a call error, so it is still incomplete at K = 1.
    assert result.no_score[GAPS].startswith("1 of 6 question(s) incomplete: s1 (sample 0: rate_limit)")


def test_mc_multi_random_baselines_by_enumeration() -> None:
    """Gold {A} of 3 options, the 8 subsets equally likely.

    points-f1 credit (F1): {} 0, {A} 1, {B} 0, {C} 0, {A,B} 2/3, {A,C} 2/3, {B,C} 0,
    {A,B,C} 2/(2 + 2) = 1/2 → (1 + 4/3 + 1/2)/8 = 17/48.
    FSS's chance Tversky TP/(TP + 2FP + 0.5FN): {A} 1, {A,B} 1/3, {A,C} 1/3, {A,B,C} 1/5, the
    rest 0 → (1 + 2/3 + 1/5)/8 = 7/30.
    """
    assert random_credit(3, 1, MC_MULTI) == F(17, 48)
    assert fa.tversky_chance(3, 1) == pytest.approx(7 / 30, rel=1e-12)
