"""FutureX-Past import against the earlier release built from the same rows (../shared fixtures).

The earlier implementation's ``forecast_eval_set`` stores ``options`` as a JSON array (its own
escaping), ``answer`` as comma-separated letters in option order (``"A, C"``) and ``end_time`` as
``YYYY-MM-DD``; both sides are decoded to values before comparing, so escaping or spacing cannot
make rows agree or disagree by accident.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from oracleproto.dataset.importers import futurex
from oracleproto.dataset.importers.records import Candidate
from tests.dataset.importers.support import invoke, leftovers, read_report

ROWS = "futurex-past-rows.jsonl"
RELEASE = "forecast_eval_set.subset.db"
FIELDS = ("choice_type", "question_type", "options", "answer", "end_time")

Decoded = dict[str, Any]


def _decoded(choice_type: str, question_type: str, options: str, answer: str, end_time: str) -> Decoded:
    labels = json.loads(options)
    assert isinstance(labels, list), f"options {options!r} is not a JSON array"
    return {
        "choice_type": choice_type,
        "question_type": question_type,
        "options": labels,
        "answer": [part.strip() for part in answer.split(",")],
        "end_time": date.fromisoformat(end_time),
    }


def _table(db: Path, table: str) -> dict[str, Decoded]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute(
            f"SELECT id, choice_type, question_type, options, answer, end_time FROM {table}"
        ).fetchall()
    return {row[0]: _decoded(*row[1:]) for row in rows}


def _import(earlier_harness: Path, out: Path, *extra: str) -> dict[str, Decoded]:
    code, _, stderr = invoke("dataset", "import", "futurex-past", earlier_harness / ROWS, out, *extra)
    assert code == 0, stderr
    return _table(out, "questions")


def _disagreements(ours: dict[str, Decoded], release: dict[str, Decoded]) -> dict[str, list[str]]:
    return {
        row_id: [f for f in FIELDS if ours.get(row_id, {}).get(f) != expected[f]]
        for row_id, expected in release.items()
        if row_id not in ours or any(ours[row_id][f] != expected[f] for f in FIELDS)
    }


@pytest.mark.shared
def test_default_import_reproduces_every_release_row(earlier_harness: Path, tmp_path: Path) -> None:
    release = _table(earlier_harness / RELEASE, "forecast_eval_set")
    ours = _import(earlier_harness, tmp_path / "fx.db")
    assert len(release) == 94
    assert _disagreements(ours, release) == {}  # 94 of 94 agree on all five fields
    # The ten rows the release lacks are the ones it documents dropping: levels 3-4, "None of the above".
    report = read_report(tmp_path / "fx.db")
    assert set(ours) == set(release)
    assert {k: v["count"] for k, v in report["dropped_by_reason"].items()} == {
        "level_excluded": 9,
        "answer_none_of_the_above": 1,
    }
    assert report["options"]["choice_type_rule"] == "answers"
    # Not vacuous: the release has both kinds, and a last option that ends with a quoted title.
    assert {r["choice_type"] for r in release.values()} == {"single", "multi"}
    assert ours["695a5d897b2e6a00694886af"]["options"][-1] == '"The Subway," Chappell Roan'


@pytest.mark.shared
def test_prompt_rule_differs_from_the_release_only_in_choice_type(
    earlier_harness: Path, tmp_path: Path
) -> None:
    release = _table(earlier_harness / RELEASE, "forecast_eval_set")
    ours = _import(earlier_harness, tmp_path / "fx.db", "--choice-type-rule", "prompt")
    differ = _disagreements(ours, release)
    assert set(map(tuple, differ.values())) == {("choice_type",)}
    # Every such row has one answer and a prompt asking for "all the correct option(s)".
    assert all(ours[i]["choice_type"] == "multi" for i in differ)
    assert all(len(release[i]["answer"]) == 1 for i in differ)
    assert len(differ) == 53
    assert read_report(tmp_path / "fx.db")["options"]["choice_type_rule"] == "prompt"


_HINT_PROMPT = (
    'You are an agent. The event to be predicted: "Which city? (resolved around 2031-03-02 (GMT+8)). \n'
    "A. the outcome be Calder\n"
    'B. the outcome be "Northshore," the harbour town"\n'
    "IMPORTANT: Your final answer MUST end with this exact format:\n\n"
    "Your task is to identify all the correct option(s) based on your analysis.\n"
    "Selecting any wrong option or failing to select all correct options will result in a penalty."
)


def _record(truth: object) -> dict[str, object]:
    return {
        "id": "q1",
        "prompt": _HINT_PROMPT,
        "end_time": "2031-03-02",
        "level": 1,
        "title": "Which city?",
        "ground_truth": truth,
    }


@pytest.mark.parametrize(
    ("rule", "truth", "expected"),
    [
        ("answers", "['A']", "single"),
        ("prompt", "['A']", "multi"),
        ("answers", "['A', 'B']", "multi"),
        ("prompt", "['A', 'B']", "multi"),
    ],
)
def test_choice_type_rules(rule: futurex.ChoiceTypeRule, truth: str, expected: str) -> None:
    candidate = futurex.collapse(_record(truth), 0, futurex.DEFAULT_LEVELS, rule)
    assert isinstance(candidate, Candidate)
    assert candidate.choice_type == expected


def test_the_frame_closing_quote_is_not_part_of_the_last_option() -> None:
    assert futurex.parse_options(_HINT_PROMPT) == ("Calder", '"Northshore," the harbour town')


def test_a_wholly_quoted_label_loses_its_quotes_but_a_quoted_title_keeps_them() -> None:
    prompt = (
        'The event to be predicted: "X (resolved around 2031-03-02 (GMT+8)). \nA. "Rain"\nB. "Sun," then fog"'
    )
    assert futurex.parse_options(prompt) == ("Rain", '"Sun," then fog')


def test_without_the_quoted_frame_a_trailing_quote_stays() -> None:
    assert futurex.parse_options('Pick a screen.\nA. "Wide"\nB. 7"') == ("Wide", '7"')


def test_unknown_choice_type_rule_exits_2_and_names_the_choices(tmp_path: Path) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(_record("['A']")) + "\n", encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    code, stdout, stderr = invoke(
        "dataset", "import", "futurex-past", rows, out_dir / "x.db", "--choice-type-rule", "letters"
    )
    assert code == 2 and stdout == ""
    assert "--choice-type-rule" in stderr and "'answers'" in stderr and "'prompt'" in stderr
    assert "Traceback" not in stderr
    assert leftovers(out_dir) == []
