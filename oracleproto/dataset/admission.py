"""Cutoff admission, the paper's Eq. (pred-set): admitted iff κ ≤ χ < τ with χ = τ − δ.

Pure: runs before any network call, so an excluded question never costs a request.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from oracleproto.dataset.models import Question
from oracleproto.errors import ConfigError

ExclusionReason = Literal["before_training_cutoff", "after_resolution"]

_MONTH_RE = re.compile(r"^(\d{4})-(\d{2})$")
_DAY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_training_cutoff(value: date | str) -> date:
    """``YYYY-MM-DD`` as is; ``YYYY-MM`` as the last day of that month (the paper's conservative rule)."""
    if isinstance(value, date):
        return value
    text = value.strip()
    month = _MONTH_RE.match(text)
    try:
        if month:
            year, mon = int(month.group(1)), int(month.group(2))
            return date(year, mon, calendar.monthrange(year, mon)[1])
        if _DAY_RE.match(text):
            return date.fromisoformat(text)
    except ValueError:
        pass  # falls through to the message below (e.g. month 13, day 31 of a 30-day month)
    raise ConfigError(
        f"training cutoff {value!r} is not a date; use YYYY-MM-DD, or YYYY-MM for month granularity "
        "(taken as the last day of that month)"
    )


@dataclass(frozen=True)
class Admission:
    """Whether a question is admitted for a model, why not, and its prediction cutoff χ."""

    admitted: bool
    reason: ExclusionReason | None
    prediction_cutoff: date


def _check_delta(delta_days: int) -> None:
    if delta_days < 0:
        raise ConfigError(
            f"delta_days must be >= 0 (the prediction cutoff precedes resolution), got {delta_days}"
        )


def admissible(question: Question, training_cutoff: date | str, delta_days: int = 1) -> Admission:
    """Apply Eq. (pred-set) to one question: admitted iff κ ≤ χ < τ, χ = τ − δ days."""
    if delta_days < 0:
        raise ConfigError(
            f"delta_days must be >= 0 (the prediction cutoff precedes resolution), got {delta_days}"
        )
    kappa = parse_training_cutoff(training_cutoff)
    chi = question.end_time - timedelta(days=delta_days)
    if chi < kappa:
        return Admission(False, "before_training_cutoff", chi)
    if chi >= question.end_time:
        return Admission(False, "after_resolution", chi)
    return Admission(True, None, chi)


def plan_admission(
    questions: Iterable[Question], training_cutoff: date | str, delta_days: int = 1
) -> list[tuple[Question, Admission]]:
    """Admission of every question, in input order (cutoff and δ are checked once, errors early)."""
    kappa = parse_training_cutoff(training_cutoff)
    _check_delta(delta_days)
    return [(q, admissible(q, kappa, delta_days)) for q in questions]
