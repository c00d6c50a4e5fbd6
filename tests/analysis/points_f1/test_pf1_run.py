"""Whole runs scored under points-f1, every expected value worked out by hand.

Model ONE answers (n = 3): y1 yes/no gold A: A A B; b1 binary gold B: B B B; s1 MC-single of 3,
gold B: B A A; m1 MC-multi of 4, gold {A, C}: {A,C} {A} {A,B,C}. Mean credits 2/3, 1, 1/3, 37/45;
points 1, 1, 2, 3 (7 in all); earned 2/3 + 1 + 2/3 + 37/15 = 72/15 = 4.8; score 480/7.
"""

from __future__ import annotations

import csv
import io
import math
import sqlite3
from fractions import Fraction
from pathlib import Path

import pytest
from builder import CUT, EMPTY, ERR, Q, RunSpec, T, model_file, ok, write_run

from oracleproto.analysis.cost import PriceTable, TokenPrice
from oracleproto.analysis.points_f1 import analyze_points_f1
from oracleproto.analysis.points_f1.render import score_summary_csv
from oracleproto.analysis.reader import read_run
from oracleproto.errors import AnalysisError

ONE, TWO, THREE = "vendor-a/one::r5::c4", "vendor-b/two::r5::c4", "vendor-c/three::r5::c4"
QUESTIONS = (
    Q("y1", "yes_no", "single", ("Yes", "No"), "A"),
    Q("b1", "binary_named", "single", ("X", "Y"), "B"),
    Q("s1", "multiple_choice", "single", ("x", "y", "z"), "B"),
    Q("m1", "multiple_choice", "multi", ("w", "x", "y", "z"), "A, C"),
)
ONE_TRIALS = {
    "y1": [ok("A"), ok("A"), ok("B")],
    "b1": [ok("B"), ok("B"), ok("B")],
    "s1": [ok("B"), ok("A"), ok("A")],
    "m1": [ok("A,C"), ok("A"), ok("A,B,C")],
}
PERFECT = {"y1": [ok("A")] * 3, "b1": [ok("B")] * 3, "s1": [ok("B")] * 3, "m1": [ok("A,C")] * 3}
REFUSAL = T(error="content_policy", prompt=0, completion=0, tools=0, steps=0, latency=0)


def _run(tmp_path: Path, models: dict[str, dict[str, list[T]]], n: int = 3) -> Path:
    return write_run(tmp_path, RunSpec(n=n, models=models, questions=QUESTIONS))


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_one_model_every_summary_value(tmp_path: Path) -> None:
    result = analyze_points_f1(read_run(_run(tmp_path, {ONE: ONE_TRIALS, TWO: PERFECT})), iterations=0)
    v = result.summaries[ONE]
    assert (v["questions"], v["complete_questions"], v["full_points"]) == (4, 4, 7)
    assert v["earned_points_mean"] == Fraction(24, 5)
    assert v["score"] == Fraction(480, 7)
    assert v["exact_at_1"] == Fraction(7, 12)  # (2/3 + 1 + 1/3 + 1/3)/4
    assert (v["pass_at_3"], v["pass_all_at_3"]) == (1, Fraction(1, 4))
    assert v["majority_correct_at_3"] == Fraction(1, 2)  # y1 and b1 have ≥ 2 exact
    # Votes: y1 A (right), b1 B (right), s1 A (wrong), m1 none (three different sets).
    assert v["vote_score"] == Fraction(200, 7)
    assert (v["vote_exact"], v["vote_coverage"]) == (Fraction(1, 2), Fraction(3, 4))
    assert v["vote_gain_pp"] == -40
    assert v["pairwise_agreement"] == Fraction(5, 12)  # (1/3 + 1 + 1/3 + 0)/4
    assert v["agreement_questions"] == 4
    assert (v["valid_repeat_panel"], v["all_same"], v["all_same_wrong"]) == (1, Fraction(1, 4), 0)
    assert v["credit_sd"] == pytest.approx((2 / math.sqrt(3) + math.sqrt(57) / 45) / 4, abs=1e-15)
    assert v["best_of_n_score"] == 100
    assert v["worst_of_n_score"] == Fraction(300, 7)  # worst credits 0, 1, 0, 2/3
    # Random: 1/2 + 1/2 + 2·(1/3) + 3·(37/80) = 733/240 of 7 points.
    assert v["random_score"] == Fraction(73300, 1680)
    # Per-trial-index scores 100, 400/7, 340/7 (mean 480/7): SD √(37200/49 / 1)… = √37200/7.
    assert v["trial_score_sd_pp"] == pytest.approx(math.sqrt(37200) / 7, abs=1e-12)
    assert v["mean_prompt_tokens"] == 100 and v["mean_latency_ms"] == 1000
    assert result.summaries[TWO]["score"] == 100
    assert result.no_score == {}


def test_by_type(tmp_path: Path) -> None:
    result = analyze_points_f1(read_run(_run(tmp_path, {ONE: ONE_TRIALS})), iterations=0)
    by_type = result.by_type[ONE]
    assert by_type["yes_no"]["score"] == Fraction(200, 3)
    assert by_type["mc_single"]["full_points"] == 2
    assert by_type["mc_single"]["score"] == Fraction(100, 3)
    assert by_type["mc_multi"]["score"] == Fraction(3700, 45)


def test_content_policy_refusal_earns_zero_and_stays(tmp_path: Path) -> None:
    trials = {**ONE_TRIALS, "y1": [ok("A"), REFUSAL, REFUSAL]}
    result = analyze_points_f1(read_run(_run(tmp_path, {ONE: trials})), iterations=0)
    # y1's mean credit drops to 1/3: (1/3 + 1 + 2/3 + 37/15)/7 = (67/15)/7.
    assert result.summaries[ONE]["score"] == Fraction(6700, 105)
    assert result.no_score == {}


def test_incomplete_question_means_no_official_score(tmp_path: Path) -> None:
    two = {**PERFECT, "b1": [ok("B"), ERR, EMPTY]}
    result = analyze_points_f1(read_run(_run(tmp_path, {ONE: ONE_TRIALS, TWO: two})), iterations=200)
    assert result.no_score == {
        TWO: "1 of 4 question(s) incomplete: b1 (sample 1: rate_limit, sample 2: missing)"
    }
    v = result.summaries[TWO]
    assert v["score"] is None and v["score_ci_low"] is None
    assert (v["questions"], v["complete_questions"], v["full_points"]) == (4, 3, 7)
    # One question per bucket: every resample would be the data itself, so no interval at all.
    assert result.summaries[ONE]["score_ci_low"] is None
    assert (
        "no bootstrap intervals: resampling needs two questions in one bucket of the population"
        in result.notes
    )
    row = _rows(score_summary_csv(result))[1]
    assert (row["score"], row["official_score"]) == ("", "false")
    assert row["no_score_reason"].startswith("1 of 4 question(s) incomplete: b1")
    assert any(n.startswith(f"{TWO}: no official points-f1 score") for n in result.notes)


def test_a_model_without_a_score_leaves_the_others_intervals_unchanged(tmp_path: Path) -> None:
    """With a second yes/no question the resamples vary; ONE alone and ONE beside an incomplete
    model get the same interval (the draws depend on the population, not on who is compared),
    and ONE, compared alone, ranks first in every resample."""
    questions = (*QUESTIONS, Q("y2", "yes_no", "single", ("Yes", "No"), "B"))
    one = {**ONE_TRIALS, "y2": [ok("B"), ok("A"), ok("B")]}
    two = {**PERFECT, "y2": [ok("B"), ERR, ok("B")]}
    alone = write_run(tmp_path / "a", RunSpec(n=3, models={ONE: one}, questions=questions))
    beside = write_run(tmp_path / "b", RunSpec(n=3, models={ONE: one, TWO: two}, questions=questions))
    first = analyze_points_f1(read_run(alone), iterations=300)
    second = analyze_points_f1(read_run(beside), iterations=300)
    interval = (first.summaries[ONE]["score_ci_low"], first.summaries[ONE]["score_ci_high"])
    assert interval[0] is not None
    assert (second.summaries[ONE]["score_ci_low"], second.summaries[ONE]["score_ci_high"]) == interval
    assert second.pairs == []
    assert second.ranks is not None and second.ranks.p_rank(ONE, 1) == 1
    assert second.no_score == {TWO: "1 of 5 question(s) incomplete: y2 (sample 1: rate_limit)"}


def test_cutoff_exclusion_shrinks_the_population_for_every_model(tmp_path: Path) -> None:
    three = {**PERFECT, "y1": [CUT, CUT, CUT]}
    result = analyze_points_f1(read_run(_run(tmp_path, {ONE: ONE_TRIALS, THREE: three})), iterations=0)
    assert [q.id for q in result.panel.questions] == ["b1", "m1", "s1"]
    # ONE on b1, s1, m1: (1 + 2/3 + 37/15)/6 = (62/15)/6.
    assert result.summaries[ONE]["score"] == Fraction(620, 9)
    assert result.summaries[ONE]["full_points"] == 6
    assert result.panel.admitted == {ONE: 4, THREE: 3}


def test_k1_does_not_invent_three_trial_metrics(tmp_path: Path) -> None:
    models = {ONE: {q: trials[:1] for q, trials in ONE_TRIALS.items()}}
    result = analyze_points_f1(read_run(_run(tmp_path, models, n=1)), iterations=0)
    row = _rows(score_summary_csv(result))[0]
    assert row["pass_at_3"] == row["pass_all_at_3"] == row["majority_correct_at_3"] == ""
    assert row["trial_score_sd_pp"] == row["credit_sd"] == row["pairwise_agreement"] == ""
    assert row["agreement_questions"] == "0"
    assert row["score"] == "100.0"  # the first trial of every question is exact
    assert row["vote_coverage"] == "1.0"  # one vote of one is a strict majority


def test_cost_columns_use_the_whole_run(tmp_path: Path) -> None:
    """12 trials of 100 prompt and 40 completion tokens at $1000/$2000 per million: $2.16;
    7 exact trials (y1 2, b1 3, s1 1, m1 1)."""
    prices = PriceTable({"vendor-a/one": TokenPrice(1000.0, 2000.0)})
    result = analyze_points_f1(read_run(_run(tmp_path, {ONE: ONE_TRIALS})), prices=prices, iterations=0)
    v = result.summaries[ONE]
    assert (v["samples"], v["exact_correct_samples"], v["cost_source"]) == (12, 7, "price table")
    assert v["usd_all_repeats"] == pytest.approx(2.16, abs=1e-12)
    assert v["usd_per_correct"] == pytest.approx(2.16 / 7, abs=1e-12)
    assert v["correct_per_usd"] == pytest.approx(7 / 2.16, abs=1e-12)


def test_a_question_that_differs_between_databases_is_refused(tmp_path: Path) -> None:
    run_dir = _run(tmp_path, {ONE: ONE_TRIALS, TWO: PERFECT})
    with sqlite3.connect(run_dir / "db" / model_file(TWO)) as con:
        con.execute("UPDATE questions SET answer = 'A' WHERE id = 'b1'")
    con.close()
    with pytest.raises(AnalysisError, match="question 'b1' differs between the models' databases"):
        analyze_points_f1(read_run(run_dir), iterations=0)


def test_summary_csv_leads_with_the_boards_columns(tmp_path: Path) -> None:
    result = analyze_points_f1(read_run(_run(tmp_path, {ONE: ONE_TRIALS})), iterations=0)
    header = score_summary_csv(result).splitlines()[0].split(",")
    # The list, in its order.
    board = [
        "model",
        "sampling_n",
        "questions",
        "complete_questions",
        "full_points",
        "earned_points_mean",
        "score",
        "exact_at_1",
        "pass_at_3",
        "pass_all_at_3",
        "majority_correct_at_3",
        "vote_score",
        "vote_exact",
        "vote_coverage",
        "vote_gain_pp",
        "pairwise_agreement",
        "agreement_questions",
        "valid_repeat_panel",
        "all_same",
        "all_same_wrong",
        "credit_sd",
        "best_of_n_score",
        "worst_of_n_score",
        "random_score",
        "trial_score_sd_pp",
        "mean_tool_calls_count",
        "mean_react_steps",
        "mean_latency_ms",
        "mean_prompt_tokens",
        "mean_completion_tokens",
        "mean_reasoning_tokens",
        "score_ci_low",
        "score_ci_high",
    ]
    cost = ["samples", "exact_correct_samples", "usd_all_repeats", "usd_per_correct", "correct_per_usd"]
    assert header == [*board, *cost, "cost_source", "official_score", "no_score_reason"]
    assert _rows(score_summary_csv(result))[0]["score"] == "68.571429"
