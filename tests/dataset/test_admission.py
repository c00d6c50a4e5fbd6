"""Eq. (pred-set): admitted iff κ ≤ χ < τ with χ = τ − δ; month cutoffs are month ends."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from oracleproto.dataset.admission import Admission, admissible, parse_training_cutoff, plan_admission
from oracleproto.dataset.loader import load_questions
from oracleproto.dataset.models import Question
from oracleproto.errors import ConfigError

#: The six training cutoffs of the paper's Table 2.
PAPER_CUTOFFS = ("2025-09-29", "2026-02-11", "2026-02-25", "2026-02-12", "2026-01-27", "2026-03-10")


def question(end_time: date) -> Question:
    return Question("q", "single", "yes_no", "[Test] event", ("Yes", "No"), frozenset({"A"}), end_time)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-02", date(2026, 2, 28)),
        ("2024-02", date(2024, 2, 29)),
        ("2025-12", date(2025, 12, 31)),
        ("2026-04", date(2026, 4, 30)),
        ("2026-02-11", date(2026, 2, 11)),
        (" 2026-02-11 ", date(2026, 2, 11)),
    ],
)
def test_parse_training_cutoff(text: str, expected: date) -> None:
    assert parse_training_cutoff(text) == expected


def test_parse_training_cutoff_passes_dates_through() -> None:
    assert parse_training_cutoff(date(2026, 1, 5)) == date(2026, 1, 5)


@pytest.mark.parametrize("bad", ["2026", "2026-13", "2026-02-30", "Feb 2026", "2026/02", ""])
def test_parse_training_cutoff_rejects_other_text(bad: str) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_training_cutoff(bad)
    assert str(exc.value) == (
        f"training cutoff {bad!r} is not a date; use YYYY-MM-DD, or YYYY-MM for month granularity "
        "(taken as the last day of that month)"
    )


def test_admitted_question_carries_its_prediction_cutoff() -> None:
    assert admissible(question(date(2026, 3, 20)), "2026-02-11") == Admission(True, None, date(2026, 3, 19))


def test_chi_equal_to_kappa_is_admitted() -> None:
    assert admissible(question(date(2026, 3, 20)), "2026-03-19").admitted


def test_chi_one_day_before_kappa_is_excluded() -> None:
    result = admissible(question(date(2026, 3, 20)), "2026-03-20")
    assert result == Admission(False, "before_training_cutoff", date(2026, 3, 19))


def test_month_granularity_uses_the_last_day() -> None:
    # χ = 2026-02-27 < 2026-02-28 = κ: excluded although χ lies inside the disclosed month.
    assert admissible(question(date(2026, 2, 28)), "2026-02").reason == "before_training_cutoff"
    assert admissible(question(date(2026, 3, 1)), "2026-02").admitted


def test_delta_zero_means_after_resolution() -> None:
    result = admissible(question(date(2026, 3, 20)), "2026-01-01", delta_days=0)
    assert result == Admission(False, "after_resolution", date(2026, 3, 20))


def test_larger_delta_moves_the_cutoff_back() -> None:
    assert admissible(question(date(2026, 3, 20)), "2026-03-10", delta_days=7).prediction_cutoff == date(
        2026, 3, 13
    )
    assert not admissible(question(date(2026, 3, 20)), "2026-03-14", delta_days=7).admitted


def test_negative_delta_is_rejected() -> None:
    with pytest.raises(ConfigError, match=r"delta_days must be >= 0 .*got -1"):
        admissible(question(date(2026, 3, 20)), "2026-01-01", delta_days=-1)


def test_plan_admission_keeps_input_order_and_parses_once() -> None:
    qs = [question(date(2026, 3, 20)), question(date(2026, 1, 2))]
    plan = plan_admission(qs, "2026-01")
    assert [(q.end_time, a.admitted, a.reason) for q, a in plan] == [
        (date(2026, 3, 20), True, None),
        (date(2026, 1, 2), False, "before_training_cutoff"),
    ]
    with pytest.raises(ConfigError):
        plan_admission([], "soon")
    with pytest.raises(ConfigError, match="delta_days must be >= 0"):
        plan_admission([], "2026-01", delta_days=-2)


def summary(plan: list[tuple[Question, Admission]]) -> dict[str, object]:
    return {
        "admitted": sum(a.admitted for _, a in plan),
        "excluded": [(q.id, q.end_time.isoformat(), a.reason) for q, a in plan if not a.admitted],
    }


def test_paper_cutoffs_admit_all_80(shared_db: Path, snapshot: SnapshotAssertion) -> None:
    questions = load_questions(shared_db)
    results = {cutoff: summary(plan_admission(questions, cutoff)) for cutoff in PAPER_CUTOFFS}
    assert all(r["admitted"] == 80 for r in results.values())
    assert results == snapshot


def test_a_late_cutoff_excludes_part_of_the_set(shared_db: Path, snapshot: SnapshotAssertion) -> None:
    questions = load_questions(shared_db)
    result = summary(plan_admission(questions, "2026-03-31"))
    # χ = τ − 1 < 2026-03-31 ⇔ τ ≤ 2026-03-31.
    assert result["admitted"] == sum(q.end_time > date(2026, 3, 31) for q in questions)
    assert result == snapshot
    assert summary(plan_admission(questions, "2026-03")) == result
