"""plan_admission's δ: 0 is allowed, the default is 1 day, and the given δ reaches every question.

Mutation testing (make mutation) found these untested: ``delta_days < 0`` could become ``<= 0``
in plan_admission's own check, its default δ could change, and δ could be dropped on the way
to ``admissible``, with every test still passing.
"""

from __future__ import annotations

from datetime import date

from oracleproto.dataset.admission import Admission, plan_admission
from oracleproto.dataset.models import Question


def question(end_time: date) -> Question:
    return Question("q", "single", "yes_no", "[Test] event", ("Yes", "No"), frozenset({"A"}), end_time)


def test_plan_admission_accepts_delta_zero() -> None:
    # χ = τ − 0 = τ, which is not before τ: every question is after resolution, none is refused.
    plan = plan_admission([question(date(2026, 3, 20))], "2026-01-01", delta_days=0)
    assert [a for _, a in plan] == [Admission(False, "after_resolution", date(2026, 3, 20))]


def test_plan_admission_defaults_to_one_day() -> None:
    plan = plan_admission([question(date(2026, 3, 20))], "2026-03-19")
    assert [a for _, a in plan] == [Admission(True, None, date(2026, 3, 19))]


def test_plan_admission_passes_its_delta_on() -> None:
    plan = plan_admission([question(date(2026, 3, 20)), question(date(2026, 4, 1))], "2026-03-10", 7)
    assert [a for _, a in plan] == [
        Admission(True, None, date(2026, 3, 13)),
        Admission(True, None, date(2026, 3, 25)),
    ]
