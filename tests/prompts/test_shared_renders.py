"""Every render of the paper's 80-question set, pinned by sha256 digest (never the text)."""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from oracleproto.dataset.loader import load_questions, load_templates
from oracleproto.dataset.models import letter
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.prompts import RuntimeProtocols, prompt_templates_hash, render_prompt, render_template

pytestmark = pytest.mark.shared

# The paper's main-run budget (T message rounds, C searches), as in the ReactSettings defaults.
T, C = 6, 4


def _digests(db: Path, protocols: RuntimeProtocols) -> dict[str, str]:
    templates = load_templates(db)
    return {q.id: sha256_hex(render_prompt(q, templates, protocols=protocols)) for q in load_questions(db)}


def test_shared_prompt_templates_hash(shared_db: Path, snapshot: SnapshotAssertion) -> None:
    assert prompt_templates_hash(load_templates(shared_db)) == snapshot


def test_shared_render_digests_without_protocols(shared_db: Path, snapshot: SnapshotAssertion) -> None:
    digests = _digests(shared_db, RuntimeProtocols.none())
    assert len(digests) == 80
    assert len(set(digests.values())) == 80
    assert digests == snapshot


def test_shared_render_digests_with_default_protocols(shared_db: Path, snapshot: SnapshotAssertion) -> None:
    digests = _digests(shared_db, RuntimeProtocols.default(T, C))
    assert len(digests) == 80
    assert digests == snapshot


def test_shared_renders_are_structurally_complete(shared_db: Path) -> None:
    templates = load_templates(shared_db)
    for question in load_questions(shared_db):
        rendered = render_template(question, templates)
        assert question.event in rendered, question.id
        assert question.end_time.isoformat() in rendered, question.id
        for placeholder in ("{agent_role}", "{event}", "{outcomes_block}", "{output_format}", "<options["):
            assert placeholder not in rendered, (question.id, placeholder)
        if question.question_type == "multiple_choice":
            for index, label in enumerate(question.options):
                assert f"\n{letter(index)}. {label}" in rendered, (question.id, index)
        if question.question_type == "binary_named":
            assert all(f"\\boxed{{{label}}}" in rendered for label in question.options), question.id
        with_protocols = render_prompt(question, templates, protocols=RuntimeProtocols.default(T, C))
        assert with_protocols.startswith(rendered + "\n\n"), question.id
