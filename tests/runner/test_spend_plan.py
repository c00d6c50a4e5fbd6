"""The dry-run plan: exact counts on the demo dataset, tokens from the rendered prompts, prices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oracleproto.analysis.prices import PriceTable, TokenPrice, load_prices
from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.loader import load_questions, load_templates
from oracleproto.prompts import render_prompt
from oracleproto.runner.identity import resolve_identity
from oracleproto.runner.setting_roles import SECTIONS
from oracleproto.runner.spend_plan import CHARS_PER_TOKEN, Bound, build_spend_plan
from oracleproto.settings.model import Settings

#: a/x admits every demo question; b/y's cutoff excludes the four resolving before 2026-03-21.
CUTOFFS = {"a/x": "2026-02", "b/y": "2026-03-20"}
EXCLUDED_FOR_B = ("demo-08", "demo-02", "demo-09", "demo-01")


def settings(**sections: dict[str, Any]) -> Settings:
    """Defaults (environment ignored) with two models, n = 2, the detector d/z."""
    values: dict[str, dict[str, Any]] = {
        "llm": {"models": list(CUTOFFS), "training_cutoffs": CUTOFFS},
        "detector": {"model": "d/z"},
        "run": {"sampling_n": 2},
    }
    for name, updates in sections.items():
        values[name] = {**values.get(name, {}), **updates}
    return Settings(**{name: cls.from_values(values.get(name, {})) for name, cls in SECTIONS.items()})  # type: ignore[attr-defined]


def test_counts_per_cell_are_exact() -> None:
    plan = build_spend_plan(settings(), demo_db_path(), prices=None)
    a, b = plan.cells
    assert (a.model, a.questions, a.admitted, a.samples) == ("a/x::r5::c4", 16, 16, 32)
    assert (b.model, b.questions, b.admitted, b.samples) == ("b/y::r5::c4", 16, 12, 24)
    # T = 6, C = 4, R = 5: expected 4 searches and 5 LLM calls per sample, at most 4 and 6.
    assert a.llm_calls == Bound(160, 192)
    assert a.search_calls == Bound(128, 128)
    assert a.detector_calls == Bound(640, 640)
    assert b.llm_calls == Bound(120, 144)
    assert b.detector_calls == Bound(480, 480)
    assert plan.total("llm_calls") == Bound(280, 336)
    [exclusion] = plan.exclusions
    assert (exclusion.model, exclusion.reason, exclusion.training_cutoff) == (
        "b/y",
        "before_training_cutoff",
        "2026-03-20",
    )
    assert exclusion.question_ids == EXCLUDED_FOR_B
    assert plan.total_usd() is None  # no price table
    assert set(plan.unpriced) == {
        "a/x (no token prices)",
        "b/y (no token prices)",
        "search (usd_per_credit or TAVILY_USD_PER_CREDIT)",
        "detector d/z (no token prices, no detector.usd_per_call)",
    }


def test_the_limit_takes_the_first_questions_some_model_admits() -> None:
    plan = build_spend_plan(settings(run={"question_limit": 5}), demo_db_path(), prices=None)
    a, b = plan.cells
    assert (plan.question_count, a.admitted, b.admitted) == (5, 5, 1)
    assert plan.exclusions[0].question_ids == EXCLUDED_FOR_B
    # A question no model admits is skipped, not counted: b/y alone still gets five.
    only_b = build_spend_plan(
        settings(llm={"models": ["b/y"]}, run={"question_limit": 5}), demo_db_path(), prices=None
    )
    assert (only_b.question_count, only_b.cells[0].admitted, only_b.exclusions) == (5, 5, [])


def test_prompt_tokens_come_from_the_rendered_prompts() -> None:
    # No search (C = 0): one call expected per sample, with exactly the rendered user prompt.
    chosen = settings(run={"grid_c_list": [0]}, detector={"enabled": False}, llm={"models": ["a/x"]})
    plan = build_spend_plan(chosen, demo_db_path(), prices=None)
    [cell] = plan.cells
    identity = resolve_identity(chosen, demo_db_path())
    protocols = identity.protocols.with_search_calls(0)
    templates = load_templates(demo_db_path())
    chars = sum(
        len(render_prompt(q, templates, protocols=protocols)) for q in load_questions(demo_db_path(), None)
    )
    assert cell.llm_prompt_tokens.expected == pytest.approx(2 * chars / CHARS_PER_TOKEN)
    assert cell.llm_calls == Bound(32, 192)
    assert (cell.search_calls, cell.detector_calls) == (Bound(0, 0), Bound(0, 0))
    assert cell.llm_completion_tokens.upper == 192 * 12_000


def test_a_price_table_turns_tokens_into_usd() -> None:
    prices = PriceTable(
        {"a/x": TokenPrice(1.0, 2.0), "b/y": TokenPrice(1.0, 2.0), "d/z": TokenPrice(0.5, 0.5)},
        search_usd_per_credit=0.01,
    )
    plan = build_spend_plan(settings(), demo_db_path(), prices=prices, prices_name="p.json")
    a = plan.cells[0]
    llm = a.usd["llm"]
    assert llm is not None
    assert llm.expected == pytest.approx(
        (a.llm_prompt_tokens.expected + 2 * a.llm_completion_tokens.expected) / 1e6, rel=1e-6
    )
    assert a.usd["search"] == Bound(1.28, 1.28)
    assert plan.unpriced == []
    total = plan.total_usd()
    assert total is not None and 0 < total.expected < total.upper


def test_the_bundled_example_price_table_loads() -> None:
    from oracleproto.cli.plan import example_prices_path

    table = load_prices(example_prices_path())
    assert table.models["sim/careful"].input_usd_per_million == 0.3
    assert table.search_usd_per_credit == 0.008


def test_the_json_form_is_complete(tmp_path: Path) -> None:
    plan = build_spend_plan(settings(), demo_db_path(), prices=None)
    data = json.loads(json.dumps(plan.to_json()))
    assert data["cells"][1]["samples"] == 24
    assert data["exclusions"][0]["question_ids"] == list(EXCLUDED_FOR_B)
    assert data["assumptions"] and data["total_usd"] is None
