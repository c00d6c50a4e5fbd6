"""Factories for small source DBs written in the shared DB's layout."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pytest

from oracleproto.dataset.models import TEMPLATE_KEYS

MakeDb = Callable[..., Path]


def good_templates() -> dict[str, str]:
    """A complete template mapping (placeholder wording; only the keys matter here)."""
    return {key: f"<{key}>" for key in TEMPLATE_KEYS}


def good_row(**overrides: object) -> dict[str, object]:
    """A valid multiple-choice row; keyword overrides replace columns."""
    row: dict[str, object] = {
        "id": "q1",
        "choice_type": "single",
        "question_type": "multiple_choice",
        "event": "[Test] Which colour will the flag be?",
        "options": json.dumps(["Red", "Green", "Blue"]),
        "answer": "B",
        "end_time": "2026-03-20",
    }
    row.update(overrides)
    return row


@pytest.fixture
def make_db(tmp_path: Path) -> MakeDb:
    """Write rows (+ features_json) to a fresh SQLite file and return its path."""
    counter = iter(range(1_000_000))

    def make(
        rows: Sequence[Mapping[str, object]],
        *,
        table: str = "questions",
        features: object | None = None,
        features_text: str | None = None,
        metadata: bool = True,
    ) -> Path:
        path = tmp_path / f"db{next(counter)}.db"
        conn = sqlite3.connect(path)
        conn.execute(
            f'CREATE TABLE "{table}" (id TEXT, choice_type TEXT, question_type TEXT, event TEXT, '
            "options TEXT, answer TEXT, end_time TEXT)"
        )
        conn.executemany(
            f'INSERT INTO "{table}" VALUES (:id, :choice_type, :question_type, :event, :options, :answer, '
            ":end_time)",
            [dict(r) for r in rows],
        )
        if metadata:
            if features_text is None:
                payload = {"prompt_reconstruction": good_templates()} if features is None else features
                features_text = json.dumps(payload)
            conn.execute("CREATE TABLE dataset_metadata (features_json TEXT)")
            conn.execute("INSERT INTO dataset_metadata VALUES (?)", (features_text,))
        conn.commit()
        conn.close()
        return path

    return make


RowFactory = Callable[..., dict[str, object]]


@pytest.fixture
def row() -> RowFactory:
    """The ``good_row`` factory, for test modules (importlib mode forbids importing conftest)."""
    return good_row


@pytest.fixture
def templates_mapping() -> dict[str, str]:
    """A fresh complete template mapping."""
    return good_templates()
