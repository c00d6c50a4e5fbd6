"""The packaged demo dataset: fictional, labelled, covering every question shape."""

from __future__ import annotations

import string
from datetime import date
from pathlib import Path

from syrupy.assertion import SnapshotAssertion

import oracleproto
from oracleproto.dataset.demo import demo_db_path, demo_questions_path, demo_templates
from oracleproto.dataset.info import db_info
from oracleproto.dataset.loader import load_questions, load_templates, validate_db
from oracleproto.dataset.models import TEMPLATE_KEYS


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_demo_db_ships_inside_the_package() -> None:
    package_dir = Path(oracleproto.__file__).parent
    assert demo_db_path() == package_dir / "data" / "demo.db"
    assert demo_questions_path().parent == demo_db_path().parent


def test_demo_is_valid_and_spans_every_shape() -> None:
    assert validate_db(demo_db_path()).ok
    questions = load_questions(demo_db_path())
    assert 12 <= len(questions) <= 20
    buckets = [q.bucket for q in questions]
    assert {b: buckets.count(b) for b in set(buckets)} == {
        "yes_no": 5,
        "binary": 3,
        "mc_single": 4,
        "mc_multi": 4,
    }
    assert any(q.bucket == "mc_multi" and len(q.answer) == 1 for q in questions)
    assert all(q.event.startswith("[Fictional demo] ") for q in questions)
    assert all(date(2026, 3, 1) <= q.end_time <= date(2026, 4, 30) for q in questions)


def test_demo_templates_use_the_papers_placeholders_in_our_own_words(shared_db: Path) -> None:
    ours = load_templates(demo_db_path()).as_dict()
    assert ours == demo_templates()
    assert set(ours) == set(TEMPLATE_KEYS)
    shared = load_templates(shared_db).as_dict()
    assert (
        placeholders(ours["prompt_template"])
        == placeholders(shared["prompt_template"])
        == {"agent_role", "event", "end_time", "outcomes_block", "output_format", "guidance"}
    )
    assert "<options[0]>" in ours["binary_named_output_format"]
    assert "<options[1]>" in ours["binary_named_output_format"]
    # Never the shared wording: no sentence of theirs appears in ours.
    for key in TEMPLATE_KEYS:
        for sentence in shared[key].replace("\n", ". ").split(". "):
            if len(sentence) > 25 and "\\boxed" not in sentence:  # box formats are shared syntax
                assert sentence not in ours[key], (key, sentence)


def test_demo_info(snapshot: SnapshotAssertion) -> None:
    assert db_info(demo_db_path()).as_json() == snapshot
