"""The simulator bills like real gateways for some personas: OpenRouter's ``usage.cost``, xAI's
ticks, or nothing; long conversations get prefix-cache hits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracleproto.providers.chat_parse import parse_usage
from oracleproto.sim import chat_api, openai_wire
from oracleproto.sim.personas import DETECTOR_SLUG, PERSONAS


def _usage(
    chat_body: Callable[..., dict[str, Any]], render: Callable[..., str], model: str
) -> dict[str, Any]:
    prompt = render("Will the fictional Lake Vessa ferry resume service?", "yes_no")
    body = chat_body(model, [{"role": "user", "content": prompt}], tools=False)
    usage: dict[str, Any] = chat_api.completion(7, body, "k")["usage"]
    return usage


def _real_openrouter_usage(shared_payloads: Path) -> dict[str, Any]:
    data = yaml.load(
        (shared_payloads / "pydantic-ai" / "test_openrouter_usage.yaml").read_text(), Loader=yaml.CSafeLoader
    )
    usages = [i["response"]["parsed_body"].get("usage") or {} for i in data["interactions"]]
    return next(u for u in usages if "cost" in u)


def test_openrouter_style_personas_send_its_cost_fields(chat_body, render, shared_payloads: Path) -> None:
    usage = _usage(chat_body, render, "sim/careful")
    real = _real_openrouter_usage(shared_payloads)
    for key in ("cost", "is_byok", "cost_details"):
        assert type(usage[key]) is type(real[key]), key
    assert usage["cost_details"].keys() <= real["cost_details"].keys()
    price = PERSONAS["careful"].usd_per_million
    expected = openai_wire.call_cost_usd(price, usage["prompt_tokens"], 0, usage["completion_tokens"])
    assert usage["cost"] == pytest.approx(expected) and usage["cost"] > 0


def test_ticks_persona_and_silent_persona(chat_body, render) -> None:
    ticks = _usage(chat_body, render, "sim/hasty")
    assert isinstance(ticks["cost_in_usd_ticks"], int) and "cost" not in ticks
    assert parse_usage(ticks).cost_usd == pytest.approx(ticks["cost_in_usd_ticks"] / 1e10)
    silent = _usage(chat_body, render, "sim/sloppy")
    assert not {"cost", "cost_in_usd_ticks"} & set(silent) and parse_usage(silent).cost_usd is None
    # Not every persona reports a cost, so runs exercise both sources of Table 3.
    styles = {p.cost_style for p in PERSONAS.values()}
    assert {"cost", "ticks", None} <= styles


def test_the_detector_reports_its_cost() -> None:
    prompt = (
        "title: t\nurl: u\npublished_date: 2025-01-01\ncontent: c\nraw_content: r\ncutoff_date: 2025-06-01"
    )
    body = {"model": DETECTOR_SLUG, "messages": [{"role": "user", "content": prompt}]}
    usage = chat_api.completion(7, body, "k")["usage"]
    assert usage["cost"] > 0


def test_prefix_cache_hits_follow_the_conversation() -> None:
    long = "x" * 6000  # about 1500 tokens: above the 1024-token caching floor
    first = [{"role": "user", "content": long}]
    assert openai_wire.cached_prefix_tokens(first, []) == 0
    later = [*first, {"role": "assistant", "content": "thinking"}, {"role": "user", "content": "go on"}]
    cached = openai_wire.cached_prefix_tokens(later, [])
    assert cached % openai_wire.CACHE_BLOCK_TOKENS == 0
    assert 0 < cached <= openai_wire.prompt_tokens(first, [])
    short = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
        {"role": "user", "content": "?"},
    ]
    assert openai_wire.cached_prefix_tokens(short, []) == 0
    # A cached token costs a tenth of a fresh one.
    assert openai_wire.call_cost_usd((1.0, 0.0), 1000, 1000, 0) == pytest.approx(
        openai_wire.call_cost_usd((1.0, 0.0), 100, 0, 0)
    )
