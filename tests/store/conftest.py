"""Fixtures of the run-store tests: fictional questions, templates, run meta and results."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from oracleproto.agent.result import SampleResult
from oracleproto.dataset.models import TEMPLATE_KEYS, PromptTemplates, Question
from oracleproto.store import ModelStore, RunMeta

STARTED = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


@pytest.fixture
def questions() -> list[Question]:
    """Three fictional questions covering the three question types."""
    return [
        Question(
            "q-yes",
            "single",
            "yes_no",
            "Will the fictional Zephyr bridge open by May?",
            ("Yes", "No"),
            frozenset({"A"}),
            date(2026, 4, 1),
        ),
        Question(
            "q-named",
            "single",
            "binary_named",
            "Which fictional team wins the Glass Cup?",
            ("Otters", "Ravens"),
            frozenset({"B"}),
            date(2026, 4, 2),
        ),
        Question(
            "q-multi",
            "multi",
            "multiple_choice",
            "Which fictional towns host the fair — café, naïve?",
            ("Aldmoor", "Brisk", "Corvin", "Dunmere"),
            frozenset({"A", "C"}),
            date(2026, 4, 3),
        ),
    ]


@pytest.fixture
def templates() -> PromptTemplates:
    """The eight required template keys with placeholder text."""
    return PromptTemplates.from_mapping({key: f"template {key} — {{event}}" for key in TEMPLATE_KEYS})


@pytest.fixture
def meta() -> RunMeta:
    """A run_meta row for a two-sample run of one grid cell."""
    return RunMeta(
        run_id="20260301-120000-0a1f",
        model="vendor-a/model-1::r5::c4",
        sampling_n=2,
        config_snapshot={"llm": {"api_key": "sk-a…0123456789ab", "temperature": 0.7}},
        filters_snapshot={"question_types": None, "choice_types": None},
        source_db_hash="a" * 64,
        metadata_hash="b" * 64,
        prompt_templates_hash="c" * 64,
        training_cutoff=date(2025, 6, 1),
        started_at=STARTED,
    )


ResultFactory = Callable[..., SampleResult]


@pytest.fixture
def make_result() -> ResultFactory:
    """An ok, fully populated result; keyword overrides replace fields."""

    def build(**overrides: Any) -> SampleResult:
        fields: dict[str, Any] = {
            "final_answer_letters": ("A", "C"),
            "final_answer_raw": "Reasoning… \\boxed{A, C}",
            "correct": True,
            "parse_ok": True,
            "tool_calls_count": 2,
            "react_steps": 3,
            "prompt_tokens": 1200,
            "completion_tokens": 340,
            "reasoning_tokens": 55,
            "latency_ms": 4321,
            "messages_trace": [
                {"role": "user", "content": "Frage — café"},
                {"role": "assistant", "content": "x"},
            ],
            "search_calls": [
                {
                    "query": "zephyr bridge",
                    "end_date": "2025-06-01",
                    "n_results": 2,
                    "published_dates": ["2025-05-01", None],
                }
            ],
            "error": None,
            "created_at": datetime(2026, 3, 1, 12, 5, 7, 42, tzinfo=UTC),
            "finish_reason": "stop",
            "nudges_used": 1,
            "step_metrics": [
                {
                    "step": 0,
                    "prompt": 600,
                    "completion": 100,
                    "reasoning": 5,
                    "latency_ms": 2000,
                    "finish_reason": "tool_calls",
                    "n_tool_calls": 1,
                    "belief": None,
                }
            ],
            "response_id": "chatcmpl-123",
            "system_fingerprint": "fp_abc",
            "service_tier": "default",
            "belief_final": {"A": 0.6, "C": 0.4},
            "belief_trace": [{"step": 0, "belief": {"A": 0.5, "C": 0.5}}],
            "belief_parse_ok": True,
            "final_answer_retry_used": True,
        }
        fields.update(overrides)
        return SampleResult(**fields)

    return build


@pytest.fixture
def store_factory(
    tmp_path: Path, meta: RunMeta, questions: list[Question], templates: PromptTemplates
) -> Callable[..., ModelStore]:
    """Open a ModelStore under tmp_path (same meta, questions and templates unless overridden)."""

    def open_store(path: Path | None = None, **overrides: Any) -> ModelStore:
        return ModelStore.open(
            path or tmp_path / "db" / "model.db",
            meta=overrides.get("meta", meta),
            questions=overrides.get("questions", questions),
            templates=overrides.get("templates", templates),
            imported_at=overrides.get("imported_at", STARTED),
        )

    return open_store
