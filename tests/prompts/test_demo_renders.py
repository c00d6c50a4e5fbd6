"""Renders of the bundled demo dataset (our own fictional text), snapshotted in full."""

from __future__ import annotations

from syrupy.assertion import SnapshotAssertion

from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.loader import load_questions, load_templates
from oracleproto.prompts import RuntimeProtocols, prompt_templates_hash, render_prompt


def _renders(protocols: RuntimeProtocols) -> dict[str, str]:
    db = demo_db_path()
    templates = load_templates(db)
    return {q.id: render_prompt(q, templates, protocols=protocols) for q in load_questions(db)}


def test_demo_renders_without_protocols(snapshot: SnapshotAssertion) -> None:
    renders = _renders(RuntimeProtocols.none())
    assert len(renders) >= 12
    assert renders == snapshot


def test_demo_renders_with_every_protocol(snapshot: SnapshotAssertion) -> None:
    assert _renders(RuntimeProtocols.all(6, 4)) == snapshot


def test_demo_prompt_templates_hash(snapshot: SnapshotAssertion) -> None:
    assert prompt_templates_hash(load_templates(demo_db_path())) == snapshot
