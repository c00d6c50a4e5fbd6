"""The leakage bound (``analysis/leakage.py``) on the points-f1 score.

The score is 100·Σ_q points_q·(mean over q's K trials of credit_qj) / Σ_q points_q over the
population (points 1/1/2/3; credit 1 or 0 for an exact set, F1 for MC-multi, 0 for ⊥ or a
refusal), so it is the sum over all K·|population| trials of

    contribution_qj = 100·points_q·credit_qj / (K·Σ points)

and those are the graded trials (T = K·|population|). Only models with an official score are
bounded (an incomplete question leaves a model without a score, so without a bound); their rows
still appear, saying why. ``report --convention points-f1 --audit DIR`` writes
``leakage_bounds.csv`` and ``leakage.json`` and prints :func:`leakage_markdown`; the leaderboard
shows the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import Any

from oracleproto.analysis.leakage import AuditBound, Leakage, Shown, apply_bound, bound_lines, bound_rows
from oracleproto.analysis.points_f1.compute import PointsF1Result
from oracleproto.analysis.points_f1.contract import POINTS_BY_INDEX
from oracleproto.analysis.points_f1.question import score_question

METRIC = "score"


def trial_contributions(result: PointsF1Result, models: Iterable[str]) -> dict[str, list[Fraction]]:
    """Per model (complete on the population), each trial's points toward its score (0–100)."""
    questions = result.panel.questions
    full = sum(POINTS_BY_INDEX[q.bucket] for q in questions)
    out: dict[str, list[Fraction]] = {}
    for slug in models:
        values: list[Fraction] = []
        for q, trials in zip(questions, result.panel.trials[slug], strict=True):
            scored = score_question(q, trials)
            weight = Fraction(100 * scored.points, scored.k * full)
            values += [weight * credit for credit in scored.credits]
        out[slug] = values
    return out


def points_f1_leakage(result: PointsF1Result, audits: Mapping[str, AuditBound]) -> Leakage:
    """The bound of every model with an official score that an audit covers (model → its audit)."""
    covered = [m for m in result.compared if m in audits]
    point = {m: result.summaries[m]["score"] for m in result.compared}
    return apply_bound(METRIC, result.compared, point, trial_contributions(result, covered), audits)


def points_f1_rows(result: PointsF1Result, leak: Leakage) -> list[dict[str, Any]]:
    """:func:`leakage.bound_rows` of every model (a model without an official score: no bound)."""
    point = {m: result.summaries[m]["score"] for m in result.compared}
    interval: dict[str, tuple[float, float] | None] = {}
    for m in result.compared:
        low, high = result.summaries[m]["score_ci_low"], result.summaries[m]["score_ci_high"]
        interval[m] = None if low is None else (low, high)
    return bound_rows(leak, result.model_order, point, interval)


def leakage_markdown(result: PointsF1Result, leak: Leakage) -> str:
    """The lines ``report`` prints under the table (scores with the board's 2 decimals)."""
    missing = {m: f"no official score: {why}" for m, why in result.no_score.items()}
    shown = Shown("points-f1 score", "Score", 2, result.shown, missing)
    return bound_lines(leak, points_f1_rows(result, leak), shown)
