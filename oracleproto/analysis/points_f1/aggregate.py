"""A model's points-f1 summary over a set of questions: the score and every averaged metric.

Rates are question means (per question first, then the plain mean over questions); scores are
points-weighted, 100·Σ points·value / Σ points. All exact until rendered; only the standard
deviations are floats (correctly rounded square roots, averaged with ``math.fsum``). Without an
official score (an incomplete question) only the counts and the random baseline are given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from oracleproto.analysis.points_f1.question import QuestionScore
from oracleproto.analysis.rational import float_mean, mean, sample_sd, total

#: Question-mean rates: column → per-question value (None: the question does not count).
RATES: dict[str, Callable[[QuestionScore], Fraction | int | None]] = {
    "exact_at_1": lambda q: q.exact_at_1,
    "pass_at_3": lambda q: q.pass_at_3,
    "pass_all_at_3": lambda q: q.pass_all_at_3,
    "majority_correct_at_3": lambda q: q.majority_correct_at_3,
    "vote_exact": lambda q: q.vote_exact,
    "vote_coverage": lambda q: q.vote_coverage,
    "pairwise_agreement": lambda q: q.pairwise_agreement,
    "valid_repeat_panel": lambda q: q.valid_repeat_panel,
    "all_same": lambda q: q.all_same,
    "all_same_wrong": lambda q: q.all_same_wrong,
}
#: Points-weighted scores: column → per-question credit.
SCORES: dict[str, Callable[[QuestionScore], Fraction]] = {
    "vote_score": lambda q: q.vote_credit,
    "best_of_n_score": lambda q: q.best_credit,
    "worst_of_n_score": lambda q: q.worst_credit,
}


def weighted_score(
    questions: Sequence[QuestionScore], value: Callable[[QuestionScore], Fraction]
) -> Fraction:
    """100·Σ points·value / Σ points over ``questions`` (non-empty)."""
    full = sum(q.points for q in questions)
    return 100 * total(q.points * value(q) for q in questions) / full


def summarize(questions: Sequence[QuestionScore]) -> dict[str, Any]:
    """The summary columns of ``score_summary.csv`` from ``questions`` (Fractions, floats, ints)."""
    complete = [q for q in questions if q.complete]
    official = bool(questions) and len(complete) == len(questions)
    out: dict[str, Any] = {
        "questions": len(questions),
        "complete_questions": len(complete),
        "full_points": sum(q.points for q in questions),
        "random_score": weighted_score(questions, lambda q: q.random_credit) if questions else None,
    }
    if not official:
        undefined = ("earned_points_mean", "score", *RATES, *SCORES, "vote_gain_pp", "credit_sd")
        return out | dict.fromkeys(undefined) | {"agreement_questions": 0}
    score = weighted_score(questions, lambda q: q.mean_credit)
    out.update(earned_points_mean=total(q.points * q.mean_credit for q in questions), score=score)
    for key, rate in RATES.items():
        out[key] = mean([v for v in (rate(q) for q in questions) if v is not None])
    for key, credit in SCORES.items():
        out[key] = weighted_score(questions, credit)
    out["vote_gain_pp"] = out["vote_score"] - score
    out["agreement_questions"] = sum(q.pairwise_agreement is not None for q in questions)
    out["credit_sd"] = float_mean([q.credit_sd for q in questions if q.credit_sd is not None])
    return out


def trial_score_sd_pp(questions: Sequence[QuestionScore]) -> float | None:
    """Sample SD (percentage points) of the K scores each computed from one trial index alone.

    Trial j's score is 100·Σ points·credit_j / Σ points: how much the headline would move had the
    model been sampled once. Undefined without an official score or with fewer than two trials.
    """
    if not questions or not all(q.complete for q in questions):
        return None
    k = min(q.k for q in questions)
    per_trial = [weighted_score(questions, _credit_of(j)) for j in range(k)]
    return sample_sd(per_trial)


def _credit_of(j: int) -> Callable[[QuestionScore], Fraction]:
    return lambda q: q.credits[j]


def incomplete_reason(questions: Sequence[QuestionScore]) -> str | None:
    """Why a model has no official score, naming the first questions; None when it has one."""
    if not questions:
        return "no question in the population (no question was admitted for every model)"
    bad = [q for q in questions if not q.complete]
    if not bad:
        return None
    shown = "; ".join(f"{q.question.id} ({', '.join(q.incomplete)})" for q in bad[:3])
    more = f"; and {len(bad) - 3} more" if len(bad) > 3 else ""
    return f"{len(bad)} of {len(questions)} question(s) incomplete: {shown}{more}"
