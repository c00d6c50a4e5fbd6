"""Family A and validity on one table written by hand, under both reductions (exact, and numpy's).

make mutation found the numpy path (kept to re-score runs published before analysis revision 4)
untested, and several accuracy pieces checked only through golden files. Every expected value
below is worked out from this table (n = 3, five letters wide):

=====  =========  ==  ====  =======================  =============================
 q     bucket     k   gold  trials                   per question (counted trials)
=====  =========  ==  ====  =======================  =============================
 q0    yes_no     2   A     A, A, B                  exam 2/3, right 2 of 3
 q1    binary     2   B     B, B, call error         exam 1, right 2 of 2
 q2    mc_single  4   C     D, parse failure, cut    exam 0, right 0 of 2
 q3    mc_multi   4   A,C   A, A+C, A+B              exam (1/2 + 1 + 0)/3 = 1/2, right 1 of 3
 q4    mc_single  3   A     3 call errors            nothing counted
=====  =========  ==  ====  =======================  =============================

Tool calls per trial: q0 1 2 3, q1 1 1 0, q2 2 0 0, q3 0 1 2, q4 0 0 0.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from tables_by_hand import CUT, ERR, FAIL, table

from oracleproto.analysis import exact
from oracleproto.analysis import family_a as fa
from oracleproto.analysis.conventions import Convention
from oracleproto.analysis.revisions import EXACT_REDUCTIONS
from oracleproto.analysis.trials import TrialTable

P, R = Convention.PAPER, Convention.REFERENCE_V4

T = table(
    [
        ("yes_no", 2, "A"),
        ("binary", 2, "B"),
        ("mc_single", 4, "C"),
        ("mc_multi", 4, "A,C"),
        ("mc_single", 3, "A"),
    ],
    [["A", "A", "B"], ["B", "B", ERR], ["D", FAIL, CUT], ["A", "A,C", "A,B"], [ERR, ERR, ERR]],
    counters={"tool_calls": [[1, 2, 3], [1, 1, 0], [2, 0, 0], [0, 1, 2], [0, 0, 0]]},
)


@pytest.fixture(params=["exact", "numpy"])
def reductions(request: pytest.FixtureRequest) -> Iterator[str]:
    """Each test runs with the exact reductions and with numpy's (an analysis before revision 4)."""
    revision = EXACT_REDUCTIONS if request.param == "exact" else EXACT_REDUCTIONS - 1
    with exact.reductions_of(revision):
        yield str(request.param)


def close(value: float | None, expected: float) -> bool:
    return value is not None and value == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_the_table_is_what_the_docstring_says() -> None:
    assert T.correct.sum(axis=1).tolist() == [2, 2, 0, 1, 0]
    assert T.counted.sum(axis=1).tolist() == [3, 2, 2, 3, 0]
    assert T.eligible.sum() == 14 and T.parsed.sum() == 9


def test_bucket_exam(reductions: str) -> None:
    buckets = fa.bucket_exam(T)
    assert close(buckets["yes_no"], 2 / 3)
    assert close(buckets["binary"], 1.0)
    assert buckets["mc_single"] == 0.0  # q2 alone (q4 has nothing counted)
    assert close(buckets["mc_multi"], 0.5)
    assert close(buckets["mc"], 0.25)  # (q2 0 + q3 1/2) / 2


def test_composite_accuracy(reductions: str) -> None:
    buckets = fa.bucket_exam(T)
    # paper: 0.15 · 2/3 + 0.15 · 1 + 0.70 · 1/4 = 0.425
    assert close(fa.composite_accuracy(buckets, P), 0.425)
    # reference-v4: 0.15 · 2/3 + 0.15 · 1 + 0.28 · 0 + 0.42 · 1/2 = 0.46
    assert close(fa.composite_accuracy(buckets, R), 0.46)
    # Without the binary bucket the weights renormalise: (0.1 + 0.175) / 0.85.
    assert close(fa.composite_accuracy({**buckets, "binary": None}, P), 0.275 / 0.85)
    assert fa.composite_accuracy(dict.fromkeys(buckets), P) is None


def test_pass_family(reductions: str) -> None:
    # paper: the mean over questions of right/counted: (2/3 + 1 + 0 + 1/3) / 4.
    assert close(fa.pass_at_1(T, P), 0.5)
    # reference-v4: right over resolvable trials, pooled: (2 + 2 + 0 + 1) / (3 + 2 + 1 + 3).
    assert close(fa.pass_at_1(T, R), 5 / 9)
    assert fa.pass_any(T, P) == 0.75 and fa.pass_any(T, R) == 0.75  # q0, q1, q3 of q0–q3
    # pass-all: q1 (B, B) passes on its counted trials; reference-v4 needs all 3 resolvable.
    assert fa.pass_all(T, P) == 0.25 and fa.pass_all(T, R) == 0.0
    assert fa.pass_at_least_majority(T) == 0.5  # q0 and q1 have ≥ 2 right
    # Modal parsed set, ties dropped: q0 A ✓, q1 B ✓, q2 D ✗; q3 a three-way tie; q4 nothing.
    assert close(fa.majority_vote_accuracy(T), 2 / 3)


def test_validity(reductions: str) -> None:
    # 10 counted trials (9 parsed, 1 parse failure), 4 call errors, 14 eligible; 13 tool calls.
    paper = fa.validity(T, P)
    assert paper == pytest.approx(
        {"evaluability_rate": 0.9, "parse_failure_rate": 0.1, "error_rate": 4 / 14, "avg_tool_calls": 1.3},
        rel=1e-12,
    )
    ref = fa.validity(T, R)
    assert ref == pytest.approx(
        {
            "evaluability_rate": 9 / 14,
            "parse_failure_rate": 1 / 14,
            "error_rate": 4 / 14,
            "resolvable_rate": 9 / 14,
            "avg_tool_calls": 13 / 14,
        },
        rel=1e-12,
    )


def test_weighted_mean(reductions: str) -> None:
    assert close(fa.weighted_mean([(0.5, 2), (1.0, 1)]), 2 / 3)
    assert close(fa.weighted_mean([(0.25, 3), (0.75, 1)]), 0.375)
    assert fa.weighted_mean([]) is None and fa.weighted_mean([(1.0, 0)]) is None


def empty_table() -> TrialTable:
    return table([("yes_no", 2, "A")], [[ERR, CUT]])


def test_nothing_counted_gives_none(reductions: str) -> None:
    t = empty_table()
    assert fa.bucket_exam(t) == dict.fromkeys(("yes_no", "binary", "mc_single", "mc_multi", "mc"))
    assert fa.pass_at_1(t, P) is None and fa.pass_at_1(t, R) is None
    assert fa.pass_any(t, P) is None and fa.pass_all(t, R) is None


def test_cohen_kappa(reductions: str) -> None:
    # paper, over the 10 counted trials: p_o = 5/10; p_e = (3·½ + 2·½ + 2·¼ + 3·½) / 10 = 0.45;
    # κ = 0.05 / 0.55 = 1/11.
    assert close(fa.cohen_kappa(T, P), 1 / 11)
    # reference-v4, over the 9 resolvable: p_o = 5/9, p_e = (1.5 + 1 + 0.25 + 1.5) / 9; κ = 0.75/4.75.
    assert close(fa.cohen_kappa(T, R), 3 / 19)
    one = table([("yes_no", 2, "A")], [["A", ERR]])
    assert fa.cohen_kappa(one, P) == 1.0  # p_o = 1, p_e = 1/2
    # A one-option question: chance is certain (p_e = 1), κ undefined.
    assert fa.cohen_kappa(table([("mc_single", 1, "A")], [["A", "A"]]), P) is None
    assert fa.cohen_kappa(empty_table(), P) is None


def test_tversky_and_its_chance_baseline() -> None:
    tp, fp, fn = (np.array(v) for v in ([1, 1, 2, 0, 1], [0, 1, 0, 0, 0], [1, 1, 0, 2, 0]))
    # (α, β) = (2, ½): 1/(1 + ½), 1/(1 + 2 + ½), 2/2, 0 (no true positive), 1/1.
    assert fa.tversky(tp, fp, fn).tolist() == pytest.approx([2 / 3, 2 / 7, 1.0, 0.0, 1.0])
    # k = 3, m = 1: Σ over fp of C(2, fp)/8 · 1/(1 + 2 fp) = 1/8 + 1/12 + 1/40 = 7/30.
    assert fa.tversky_chance(3, 1) == pytest.approx(7 / 30)
    # k = 4, m = 2: 1/12 + 1/14 + 1/44 + 1/16 + 1/16 + 1/48 = 1195/3696.
    assert fa.tversky_chance(4, 2) == pytest.approx(1195 / 3696)


def test_format_skill_score(reductions: str) -> None:
    # Mean Tversky per question over parsed trials: q0 2/3, q1 1, q2 0, q3 (2/3 + 1 + 2/7)/3 = 41/63.
    # Skill (T̄ − chance)/(1 − chance): q0 1/3, q1 1, q2 −1/3, q3 (41/63 − c)/(1 − c), c = 1195/3696;
    # q4 has no parsed trial. FSS = their mean = 5567/15006.
    assert close(fa.fss(T), 5567 / 15006)
    # A one-option question has no skill to show (chance 1): left out; none left gives None.
    assert fa.fss(table([("mc_single", 1, "A")], [["A", "A"]])) is None


#: For Fleiss κ: a stratum where all vote alike (k = 2), one with a single voter (k = 3) before one
#: that counts (k = 4), a multi-answer question with exactly 2 parsed trials and one with 1.
T2 = table(
    [
        ("yes_no", 2, "A"),
        ("mc_single", 3, "A"),
        ("mc_single", 4, "B"),
        ("mc_multi", 4, "A,C"),
        ("mc_multi", 4, "A,B"),
    ],
    [["A", "A", "A"], ["A", ERR, ERR], ["B", "B", "C"], ["A,C", "A", ERR], ["A,B", ERR, ERR]],
)


def test_fleiss_kappa_paper(reductions: str) -> None:
    # T, k = 2 stratum (q0 A A B, q1 B B): p_i 1/3 and 1, P̄ = 2/3; p_e = (2/5)² + (3/5)² = 13/25;
    # κ = (2/3 − 13/25)/(12/25) = 11/36 over 2 items. q3 per letter: A and D unanimous (no κ),
    # B and C split 1:2 → p_i 1/3, p_e 5/9, κ −1/2 each → −1/2 over 1 item. (2·11/36 − 1/2)/3 = 1/27.
    assert close(fa.fleiss_kappa(T, P), 1 / 27)
    # T2: k = 2 unanimous (no κ), k = 3 one voter; k = 4 q2 B B C → −1/2 over 1 item; multi: only q3
    # (2 parsed), letter C split 1:1 → p_i 0, p_e ½, κ −1 over 1 item. (−1/2 − 1)/2.
    assert close(fa.fleiss_kappa(T2, P), -0.75)


def test_fleiss_kappa_reference(reductions: str) -> None:
    # T: single strata by first letter: k = 2 as above, 11/36; multi q3: yes-votes per letter
    # A 3, B 1, C 1, D 0 of 3 → per label 1, −½, −½, 1 → mean ¼. Pools: 11/36 over the 4 single
    # questions, ¼ over the 1 multi: (44/36 + 9/36)/5 = 53/180.
    assert close(fa.fleiss_kappa(T, R), 53 / 180)
    # T2: k = 2 unanimous scores 1.0 (the earlier code's rule), k = 3 skipped, k = 4 −½ → single ¼;
    # multi q3 (q4 has 1 parsed trial): A 2, B 0, C 1, D 0 of 2 → 1, 1, −1, 1 → ½.
    # Pools: ¼ over 3 single questions, ½ over 2 multi: (0.75 + 1)/5.
    assert close(fa.fleiss_kappa(T2, R), 0.35)
