"""Leakage-adjusted intervals (issue 29 §4) on a small built run, every value worked out by hand.

Three questions, n = K = 2: y1 yes/no gold A, y2 yes/no gold B, m1 MC-multi of 4 options gold
{A, C}. ERR is a call error (rate_limit).

=====  ==========  ==========  ==================  =========================================
model  y1          y2          m1                  note
=====  ==========  ==========  ==================  =========================================
ONE    A, A        B, A        {A,C}, {A}
TWO    A, A        B, B        {A}, {A,B}
THREE  A, ERR      B, B        {A,C}, {A,C}        points-f1: incomplete (no official score)
FOUR   B, B        A, A        {A}, {B}
FIVE   ERR ×2      ERR ×2      ERR ×2              no counted trial: no composite, no score
=====  ==========  ==========  ==================  =========================================

points-f1: points 1, 1, 3 (Σ 5), so a trial contributes 100·points·credit/(K·Σ) = 10·points·credit.
ONE 10 10 | 10 0 | 30 20 (credit of {A} against {A,C}: F1 = 2/3) → score 80;
TWO 10 10 | 10 10 | 20 15 ({A,B}: F1 = 2·1/(2 + 1 + 1) = 1/2) → 75; FOUR 0 0 | 0 0 | 20 0 → 20.

paper composite: buckets with a question are yes/no (0.15) and pooled MC (0.70), renormalised
over 0.85 to 3/17 and 14/17. A counted trial contributes (w/W)·exam/(|Q_b|·c_q): a right yes/no
trial 3/17/(2·2) = 3/68 (THREE's y1, one counted trial: 3/17/(2·1) = 3/34); an m1 trial
14/17/(1·2)·exam = 7/17·exam, exam {A,C} 1, {A} 1/2, a false positive 0.
ONE 3/68 ×3, 0, 7/17, 7/34 → 51/68 = 3/4;  TWO 3/68 ×4, 7/34, 0 → 26/68 = 13/34;
THREE 3/34, 3/68 ×2, 7/17 ×2 → 1;  FOUR 0 ×4, 7/34, 0 → 7/34.
"""

from __future__ import annotations

import csv
import io
import json
from fractions import Fraction
from pathlib import Path

import pytest
from builder import ERR, Q, RunSpec, ok, write_run

from oracleproto.analysis.conventions import Convention
from oracleproto.analysis.leakage import (
    AuditBound,
    Leakage,
    audit_note,
    bound_rows,
    bounds_csv,
    could_flip,
    leak_bound,
    leakage_json,
)
from oracleproto.analysis.leakage_composite import (
    composite_contributions,
    composite_leakage,
    composite_lines,
    composite_rows,
)
from oracleproto.analysis.points_f1 import analyze_points_f1
from oracleproto.analysis.points_f1.leakage import leakage_markdown, points_f1_leakage, points_f1_rows
from oracleproto.analysis.reader import RunData, read_run
from oracleproto.analysis.report import analyze

ONE, TWO, THREE = "vendor-a/one::r5::c4", "vendor-b/two::r5::c4", "vendor-c/three::r5::c4"
FOUR, FIVE = "vendor-d/four::r5::c4", "vendor-e/five::r5::c4"
QUESTIONS = (
    Q("y1", "yes_no", "single", ("Yes", "No"), "A"),
    Q("y2", "yes_no", "single", ("Yes", "No"), "B"),
    Q("m1", "multiple_choice", "multi", ("w", "x", "y", "z"), "A, C"),
)
MODELS = {
    ONE: {"y1": [ok("A"), ok("A")], "y2": [ok("B"), ok("A")], "m1": [ok("A,C"), ok("A")]},
    TWO: {"y1": [ok("A"), ok("A")], "y2": [ok("B"), ok("B")], "m1": [ok("A"), ok("A,B")]},
    THREE: {"y1": [ok("A"), ERR], "y2": [ok("B"), ok("B")], "m1": [ok("A,C"), ok("A,C")]},
    FOUR: {"y1": [ok("B"), ok("B")], "y2": [ok("A"), ok("A")], "m1": [ok("A"), ok("B")]},
    FIVE: {"y1": [ERR, ERR], "y2": [ERR, ERR], "m1": [ERR, ERR]},
}
RUN_ID = "20260102-030405-abcd"
F = Fraction


def audit(upper: float) -> AuditBound:
    """An audit of the built run whose Wilson upper bound is ``upper`` (a binary fraction: exact)."""
    return AuditBound(where=Path("audit"), run_id=RUN_ID, fn=1, n=10, upper=upper)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunData:
    return read_run(
        write_run(tmp_path_factory.mktemp("leak"), RunSpec(n=2, models=MODELS, questions=QUESTIONS))
    )


# The rule itself -------------------------------------------------------------------------------


def test_the_worst_case_takes_whole_trials_then_a_fraction_of_the_next() -> None:
    # T = 6, u = 1/4: u·T = 3/2 → the largest (30) and half of the next (20): Δ = 40.
    bound = leak_bound([F(10), F(10), F(10), F(0), F(30), F(20)], 0.25)
    assert (bound.trials, bound.leaked, bound.loss) == (6, F(3, 2), F(40))
    # u·T = 6/64 = 3/32 < 1: no whole trial, 3/32 of the largest: 90/32 = 45/16.
    assert leak_bound([F(30), F(20)] + [F(10)] * 4, 1 / 64).loss == F(45, 16)
    # u = 1: every trial, the whole score.
    assert leak_bound([F(1, 3), F(2, 3)], 1.0).loss == 1


def test_u_zero_widens_nothing() -> None:
    bound = leak_bound([F(30), F(20)], 0.0)
    assert (bound.leaked, bound.loss) == (0, 0)
    assert leak_bound([], 0.5).loss == 0  # no graded trial, nothing to lose


def test_a_rate_outside_zero_one_is_a_bug() -> None:
    with pytest.raises(ValueError, match="a rate bound must be in"):
        leak_bound([F(1)], 1.5)


def test_could_flip_by_hand() -> None:
    point = {"a": F(80), "b": F(75), "c": F(20)}
    # a − 40 = 40 ≤ 75: flips; a − 40 > 20: holds; b − 27.5 = 47.5 > 20: holds.
    assert could_flip(["a", "b", "c"], point, {"a": F(40), "b": F(55, 2), "c": F(20)}) == [("a", "b")]
    # Reaching the lower value exactly counts (a tie loses the order); a tie on the point does not.
    assert could_flip(["a", "b"], point, {"a": F(5)}) == [("a", "b")]
    assert could_flip(["a", "b"], {"a": F(1), "b": F(1)}, {"a": F(1), "b": F(1)}) == []
    # A model no audit covers never falls; the pair is listed higher first whatever the order.
    assert could_flip(["c", "a"], point, {"c": F(20)}) == []
    assert could_flip(["c", "a"], {"a": F(1), "c": F(2)}, {"c": F(1)}) == [("c", "a")]


# points-f1 -------------------------------------------------------------------------------------


def test_points_f1_bound_flip_and_non_flips(run: RunData) -> None:
    result = analyze_points_f1(run, iterations=0)
    assert (result.summaries[ONE]["score"], result.summaries[TWO]["score"]) == (80, 75)
    assert result.summaries[FOUR]["score"] == 20 and set(result.no_score) == {THREE, FIVE}
    leak = points_f1_leakage(result, dict.fromkeys(result.model_order, audit(0.25)))
    # u·T = 3/2 for each: ONE 30 + 20/2 = 40; TWO 20 + 15/2 = 55/2; FOUR 20 + 0/2 = 20.
    assert {m: b.loss for m, b in leak.bounds.items()} == {ONE: 40, TWO: F(55, 2), FOUR: 20}
    assert set(leak.bounds) == {ONE, TWO, FOUR}  # no official score, no bound
    # ONE − 40 = 40 ≤ 75 (TWO): could flip; ONE over FOUR (40 > 20) and TWO over FOUR (47.5 > 20) hold.
    assert leak.flips == [(ONE, TWO)]
    rows = {r["model"]: r for r in points_f1_rows(result, leak)}
    assert list(rows) == [ONE, TWO, THREE, FOUR, FIVE]  # every model keeps its row
    assert rows[ONE]["value_leak_low"] == 40 and rows[FOUR]["value_leak_low"] == 0
    assert rows[ONE]["could_fall_below"] == [TWO] and rows[TWO]["could_fall_below"] == []
    assert (
        rows[THREE]["value"] is None and rows[THREE]["trials"] is None and rows[THREE]["ci_leak_low"] is None
    )
    text = leakage_markdown(result, leak)
    assert (
        "| vendor-a/one::r5::c4 | 80.00 | — | 1.50 of 6 | 40.00 | 40.00 | — | vendor-b/two::r5::c4 |" in text
    )
    assert "| vendor-c/three::r5::c4 | — | — | no official score: 1 of 3 question(s) incomplete: y1" in text
    assert "Orders the bound could flip: vendor-a/one::r5::c4 above vendor-b/two::r5::c4." in text


@pytest.mark.parametrize(
    ("upper", "loss_one", "flips"),
    [
        (0.0, F(0), []),  # nothing widens
        (1 / 64, F(45, 16), []),  # 80 − 2.8125 = 77.1875 > 75
        (1 / 32, F(45, 8), [(ONE, TWO)]),  # u·T = 3/16: 80 − 5.625 = 74.375 ≤ 75
    ],
)
def test_points_f1_small_rates(
    run: RunData, upper: float, loss_one: Fraction, flips: list[tuple[str, str]]
) -> None:
    result = analyze_points_f1(run, iterations=0)
    leak = points_f1_leakage(result, dict.fromkeys(result.model_order, audit(upper)))
    assert leak.bounds[ONE].loss == loss_one
    assert leak.flips == flips


def test_points_f1_widened_interval(run: RunData) -> None:
    """The interval's low end drops by Δ and stops at 0; its high end stays; u = 0 leaves it as is."""
    result = analyze_points_f1(run, iterations=200)
    for upper in (0.0, 0.25):
        leak = points_f1_leakage(result, dict.fromkeys(result.model_order, audit(upper)))
        rows = {r["model"]: r for r in points_f1_rows(result, leak)}
        for slug, loss in ((ONE, F(40)), (TWO, F(55, 2)), (FOUR, F(20))):
            low, high = result.summaries[slug]["score_ci_low"], result.summaries[slug]["score_ci_high"]
            assert low is not None and rows[slug]["ci_high"] == high
            expected = max(F(0), F(low) - (loss if upper else 0))
            assert rows[slug]["ci_leak_low"] == expected
        if upper:  # FOUR scores 20 at most in any resample of its three questions: widened to 0.
            assert rows[FOUR]["ci_leak_low"] == 0


# paper and reference-v4 composite ----------------------------------------------------------------


def test_composite_contributions_by_hand(run: RunData) -> None:
    tables = {m.slug: m.table for m in run.models}
    paper = {"yes_no": 0.15, "binary": 0.15, "mc": 0.70}
    assert composite_contributions(tables[ONE], paper) == [F(3, 68)] * 3 + [0, F(7, 17), F(7, 34)]
    assert composite_contributions(tables[THREE], paper) == [F(3, 34), F(3, 68), F(3, 68), F(7, 17), F(7, 17)]
    assert composite_contributions(tables[FIVE], paper) == []
    # reference-v4: yes/no 0.15 and MC-multi 0.42 renormalised over 0.57 to 5/19 and 14/19:
    # a right yes/no trial 5/19/4 = 5/76, an m1 trial 14/19/2·exam = 7/19·exam.
    reference = {"yes_no": 0.15, "binary": 0.15, "mc_single": 0.28, "mc_multi": 0.42}
    assert composite_contributions(tables[ONE], reference) == [F(5, 76)] * 3 + [0, F(7, 19), F(7, 38)]


def test_composite_bound_flips_and_non_flip(run: RunData) -> None:
    result = analyze(run, Convention.PAPER, bootstrap_samples=0)
    values = {m: result.models[m]["composite_accuracy"] for m in result.model_order}
    assert values == {ONE: 0.75, TWO: 13 / 34, THREE: 1.0, FOUR: 7 / 34, FIVE: None}
    leak = composite_leakage(run, result, audit(0.25))
    # ONE: u·T = 3/2 → 7/17 + 7/34/2 = 35/68; TWO: 7/34 + 3/68/2 = 31/136; FOUR: 7/34;
    # THREE: T = 5, u·T = 5/4 → 7/17 + 7/17/4 = 35/68.
    losses = {m: b.loss for m, b in leak.bounds.items()}
    assert losses == {ONE: F(35, 68), TWO: F(31, 136), THREE: F(35, 68), FOUR: F(7, 34)}
    assert leak.bounds[THREE].leaked == F(5, 4) and FIVE not in leak.bounds
    # Lowered: ONE 16/68 ≤ TWO 26/68 (flip) but > FOUR 14/68 (holds); THREE 33/68 ≤ ONE 51/68 (flip),
    # > TWO (holds); TWO 21/136 ≤ FOUR 28/136 (flip).
    assert leak.flips == [(ONE, TWO), (THREE, ONE), (TWO, FOUR)]
    rows = {r["model"]: r for r in composite_rows(result, leak)}
    assert rows[ONE]["value_leak_low"] == F(3, 4) - F(35, 68) == F(4, 17)
    assert rows[FIVE]["trials"] is None and rows[FIVE]["value"] is None
    assert "| vendor-e/five::r5::c4 | — | — | no composite accuracy |" in composite_lines(result, leak)


def test_composite_reference_v4(run: RunData) -> None:
    result = analyze(run, Convention.REFERENCE_V4, bootstrap_samples=0)
    leak = composite_leakage(run, result, audit(0.25))
    assert result.models[ONE]["composite_accuracy"] == 0.75
    assert leak.bounds[ONE].loss == F(7, 19) + F(7, 38) / 2 == F(35, 76)


def test_composite_widened_interval_and_files(run: RunData) -> None:
    result = analyze(run, Convention.PAPER, bootstrap_samples=100, seed=7)
    leak = composite_leakage(run, result, audit(0.25))
    rows = composite_rows(result, leak)
    one = next(r for r in rows if r["model"] == ONE)
    low, high = result.models[ONE]["ci"]["composite_accuracy"]
    assert one["ci_leak_low"] == max(F(0), F(low) - F(35, 68)) and one["ci_high"] == high
    table = list(csv.DictReader(io.StringIO(bounds_csv(rows, result.shown))))
    assert [r["model"] for r in table] == [ONE, TWO, THREE, FOUR, FIVE]
    assert table[0]["leak_loss_max"] == repr(round(35 / 68, 6)) and table[0]["leaked_trials_bound"] == "1.5"
    assert table[0]["could_fall_below"] == TWO and table[4]["leak_loss_max"] == ""
    document = json.loads(leakage_json([RUN_ID], "paper", leak, rows))
    assert document["could_flip"] == [[ONE, TWO], [THREE, ONE], [TWO, FOUR]]
    assert document["audits"] == [
        {"audit": "audit", "run_id": RUN_ID, "fn": 1, "n": 10, "fn_rate_upper": 0.25, "models": None}
    ]
    assert "floor(u*T)" in document["rule"]


def test_a_note_when_the_audit_sampled_some_models_only() -> None:
    partial = AuditBound(Path("a"), RUN_ID, 0, 10, 0.25, models=(ONE,))
    assert audit_note(partial, [ONE, TWO]) == (
        "the audit in a sampled 1 of the run's 2 models; its FN/N bound is applied to every model of the run"
    )
    assert audit_note(partial, [ONE]) is None and audit_note(audit(0.25), [ONE, TWO]) is None


def test_bound_rows_of_an_uncovered_model() -> None:
    leak = Leakage("m", {}, {}, [])
    (row,) = bound_rows(leak, ["x"], {"x": F(1, 2)}, {"x": (0.25, 0.75)})
    assert row["trials"] is None and row["ci_leak_low"] is None and row["could_fall_below"] == []
