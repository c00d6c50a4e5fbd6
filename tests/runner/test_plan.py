"""The task plan: grid cells in plan order, admission before any network work."""

from __future__ import annotations

from datetime import date

import pytest

from oracleproto.dataset.models import Question
from oracleproto.errors import ConfigError
from oracleproto.runner.plan import GridCell, build_plan


def question(qid: str, end: date) -> Question:
    return Question(qid, "single", "yes_no", f"event {qid}", ("Yes", "No"), frozenset({"A"}), end)


QUESTIONS = [question("q1", date(2026, 3, 10)), question("q2", date(2026, 4, 10))]


def test_virtual_slug_format() -> None:
    assert GridCell("vendor/m", 5, 4).virtual_slug == "vendor/m::r5::c4"


def test_cells_in_plan_order_and_admission_per_model() -> None:
    plan = build_plan(
        QUESTIONS,
        real_models=["a/early", "b/late"],
        training_cutoffs={"a/early": date(2025, 9, 29), "b/late": date(2026, 3, 31)},
        r_list=[5, 8],
        c_list=[4],
        sampling_n=3,
        delta_days=1,
    )
    assert plan.virtual_slugs == ("a/early::r5::c4", "a/early::r8::c4", "b/late::r5::c4", "b/late::r8::c4")
    early, _, late, _ = plan.cells
    assert [q.question.id for q in early.admitted] == ["q1", "q2"]
    assert [q.question.id for q in late.admitted] == ["q2"]
    assert [(q.question.id, q.admission.reason) for q in late.excluded] == [("q1", "before_training_cutoff")]
    assert plan.total_slots() == 4 * 2 * 3


def test_missing_cutoff_is_named() -> None:
    with pytest.raises(ConfigError, match=r"no cutoff for 'b/x'.*slug=2026-02"):
        build_plan(
            QUESTIONS,
            real_models=["b/x"],
            training_cutoffs={},
            r_list=[5],
            c_list=[4],
            sampling_n=1,
            delta_days=1,
        )


def test_empty_grid_rejected() -> None:
    with pytest.raises(ConfigError, match="grid is empty"):
        build_plan(
            QUESTIONS,
            real_models=["a"],
            training_cutoffs={"a": date(2025, 1, 1)},
            r_list=[],
            c_list=[4],
            sampling_n=1,
            delta_days=1,
        )
