"""The detector persona drops items dated or describing events after the cutoff."""

from __future__ import annotations

import json

import httpx
import pytest

from oracleproto.sim.detector import mentioned_dates, verdict
from oracleproto.sim.server import Simulator


def _item(**overrides: str | None) -> str:
    fields: dict[str, str | None] = {
        "title": "Vessa ferry talks",
        "url": "https://sim-wire.example/a",
        "published_date": "2026-02-01",
        "content": "Talks continued on 2026-02-01.",
        "raw_content": None,
        "cutoff_date": "2026-03-01",
    }
    fields.update(overrides)
    # Instructions around the item contain dates of their own; they must not count.
    return (
        "Audit the item below. Example: an event scheduled for 2099-01-01 after a 2098 cutoff is leakage.\n"
        f"ITEM:\n{json.dumps(fields)}\nReply with one JSON line."
    )


@pytest.mark.parametrize(
    ("overrides", "expected", "reason"),
    [
        ({}, "keep", "no information dated after 2026-03-01"),
        ({"published_date": "2026-03-02"}, "drop", "published_date 2026-03-02"),
        ({"content": "The vote is scheduled for 2026-03-20."}, "drop", "mentions 2026-03-20"),
        ({"raw_content": "Updated March 9, 2026 with results."}, "drop", "mentions 2026-03-09"),
        ({"title": "Results of 4 April 2026"}, "drop", "mentions 2026-04-04"),
        ({"published_date": None, "content": "Reported on 2026-02-28."}, "keep", "no information"),
        ({"cutoff_date": "soon"}, "drop", "no readable cutoff_date"),
    ],
)
def test_verdicts(overrides: dict[str, str | None], expected: str, reason: str) -> None:
    v, r = verdict(_item(**overrides))
    assert v == expected and reason in r


def test_label_style_prompts_are_read_too() -> None:
    text = (
        "title: Ferry update\nurl: https://x.example\npublished_date: 2026-01-10\n"
        "content: Service resumed on 2026-03-05 after repairs.\nraw_content: \ncutoff_date: 2026-03-01\n"
    )
    assert verdict(text)[0] == "drop"
    assert verdict(text.replace("2026-03-05", "2026-02-05"))[0] == "keep"


def test_mentioned_dates_ignores_impossible_dates() -> None:
    assert mentioned_dates("on 2026-02-30 or February 31, 2026, and 2026-01-05") == [
        mentioned_dates("2026-01-05")[0]
    ]


def test_detector_replies_one_json_line_over_http(sim: Simulator) -> None:
    body = {
        "model": "sim/detector",
        "temperature": 0,
        "max_tokens": 512,
        "messages": [{"role": "user", "content": _item(content="Polls close on 2026-03-10.")}],
    }
    response = httpx.post(
        sim.llm_base_url + "/chat/completions", json=body, headers={"Authorization": "Bearer k"}
    )
    content = response.json()["choices"][0]["message"]["content"]
    assert "\n" not in content
    assert json.loads(content) == {
        "verdict": "drop",
        "reason": "text mentions 2026-03-10, after the cutoff 2026-03-01",
    }


def test_detector_prompt_is_recognised_under_any_persona_slug(sim: Simulator) -> None:
    body = {"model": "sim/careful", "messages": [{"role": "user", "content": _item()}]}
    response = httpx.post(
        sim.llm_base_url + "/chat/completions", json=body, headers={"Authorization": "Bearer k"}
    )
    assert json.loads(response.json()["choices"][0]["message"]["content"])["verdict"] == "keep"
