"""Personas: deterministic, budget-aware (or not), answering in every output format."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date
from typing import Any

import httpx
import pytest

from oracleproto.agent.payloads import search_payload
from oracleproto.agent.status import Counters, StatusTexts
from oracleproto.profile import builtin_profile
from oracleproto.providers.search_results import truncation_marker
from oracleproto.providers.types import SearchOutcome, SearchResult
from oracleproto.sim import evidence
from oracleproto.sim.loopback import LoopbackRequest
from oracleproto.sim.personas import PERSONAS, persona_for_model
from oracleproto.sim.prompt_reader import read_question, tool_texts
from oracleproto.sim.server import SimConfig, SimHandler, Simulator

Body = dict[str, Any]
OPTIONS = ("Harbour Party", "Green Ridge Alliance", "Civic Union", "Independents")


def _post(handler: SimHandler, body: Body) -> bytes:
    request = LoopbackRequest(
        "POST", "/v1/chat/completions", {"authorization": "Bearer sk-sim"}, json.dumps(body).encode()
    )
    response = handler(request)
    assert response.status == 200, response.body
    return response.body


def _message(raw: bytes) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(raw)["choices"][0]["message"]
    return message


def _status(step: int, steps: int, used: int, cap: int) -> str:
    return (
        f"[Harness status] step {step}/{steps} ({steps - step} remaining) · web_search {used}/{cap} used "
        f"({cap - used} left).\nContinue."
    )


def test_slugs_select_personas() -> None:
    assert persona_for_model("sim/careful") is PERSONAS["careful"]
    assert persona_for_model("sim/persona-sloppy") is PERSONAS["sloppy"]
    assert persona_for_model("sim/unknown") is None
    assert persona_for_model("openai/gpt-4o") is None


@pytest.mark.parametrize(
    ("kind", "options", "expected"),
    [
        ("yes_no", (), ("Yes", "No")),
        ("binary_named", ("Harbour Party", "Civic Union"), ("Harbour Party", "Civic Union")),
        ("single", OPTIONS, OPTIONS),
        ("multi", OPTIONS, OPTIONS),
    ],
)
def test_prompt_reader_understands_every_output_format(
    render: Callable[..., str], kind: str, options: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    view = read_question(render("Who wins the fictional Vessa election?", kind, options))
    assert view is not None
    assert view.kind == kind and view.labels == expected
    assert view.event == "Who wins the fictional Vessa election?" and view.end_time == "2026-03-15"


def test_same_seed_gives_same_bytes_and_other_seed_differs(
    render: Callable[..., str], chat_body: Callable[..., Body]
) -> None:
    body = chat_body(
        "sim/careful", [{"role": "user", "content": render("Vessa election", "single", OPTIONS)}]
    )
    first = [_post(SimHandler(SimConfig(seed=1)), body) for _ in range(2)]
    assert first[0] == first[1]
    assert _post(SimHandler(SimConfig(seed=2)), body) != first[0]


def test_identical_requests_without_seed_are_told_apart_by_arrival_order(
    render: Callable[..., str], chat_body: Callable[..., Body]
) -> None:
    body = chat_body(
        "sim/careful", [{"role": "user", "content": render("Vessa election", "single", OPTIONS)}]
    )
    handler = SimHandler(SimConfig(seed=1))
    run = [_post(handler, body) for _ in range(3)]
    assert len(set(run)) == 3
    replay = SimHandler(SimConfig(seed=1))
    assert [_post(replay, body) for _ in range(3)] == run


def test_request_seed_pins_the_answer(render: Callable[..., str], chat_body: Callable[..., Body]) -> None:
    prompt = render("Vessa election", "single", OPTIONS)
    handler = SimHandler(SimConfig(seed=1))
    seeded = chat_body("sim/careful", [{"role": "user", "content": prompt}], seed=42)
    assert _post(handler, seeded) == _post(handler, seeded)
    other = chat_body("sim/careful", [{"role": "user", "content": prompt}], seed=43)
    assert _post(handler, other) != _post(handler, seeded)


def _play(
    handler: SimHandler,
    model: str,
    prompt: str,
    chat_body: Callable[..., Body],
    *,
    steps: int = 8,
    cap: int = 4,
) -> tuple[str, int]:
    """A minimal harness loop: returns the final content and the number of searches asked for."""
    messages: list[Body] = [{"role": "user", "content": prompt}]
    asked = 0
    for step in range(1, steps + 1):
        tools = asked < cap or model == "sim/greedy"
        message = _message(_post(handler, chat_body(model, messages, tools=tools)))
        messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
        if not message.get("tool_calls"):
            return str(message["content"]), asked
        for call in message["tool_calls"]:
            asked += 1
            query = json.loads(call["function"]["arguments"])["query"]
            topic, subject = evidence.split_query(query)
            text = (
                evidence.chances_phrase(subject, evidence.strength(topic, subject), "2026-03-01")
                if subject
                else ""
            )
            status = _status(step, steps, min(asked, cap), cap)
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call["id"],
                    "content": json.dumps({"r": text, "status": status}),
                }
            )
        messages.append({"role": "user", "content": _status(step, steps, min(asked, cap), cap)})
    return "", asked


def test_oracle_persona_answers_the_evidence_pick(
    render: Callable[..., str], chat_body: Callable[..., Body]
) -> None:
    event = "Which party wins the fictional Vessa election?"
    best = max(OPTIONS, key=lambda o: evidence.strength(event, o))
    content, _ = _play(
        SimHandler(SimConfig(seed=3)), "sim/oracle", render(event, "single", OPTIONS), chat_body
    )
    assert content.endswith(f"\\boxed{{{chr(65 + OPTIONS.index(best))}}}")


def test_yes_no_and_binary_answers_use_the_box_words(
    render: Callable[..., str], chat_body: Callable[..., Body]
) -> None:
    handler = SimHandler(SimConfig(seed=3))
    yes_no, _ = _play(handler, "sim/oracle", render("Will the Vessa ferry resume?", "yes_no"), chat_body)
    assert re.search(r"\\boxed\{(Yes|No)\}$", yes_no)
    pair = ("Harbour Party", "Civic Union")
    named, _ = _play(handler, "sim/oracle", render("Vessa mayor race", "binary_named", pair), chat_body)
    assert re.search(r"\\boxed\{(Harbour Party|Civic Union)\}$", named)


def test_well_behaved_personas_respect_the_budget_and_greedy_overruns(
    render: Callable[..., str], chat_body: Callable[..., Body]
) -> None:
    handler = SimHandler(SimConfig(seed=5))
    for i in range(20):
        prompt = render(f"Fictional question {i}", "single", OPTIONS)
        _, careful = _play(handler, "sim/careful", prompt, chat_body, cap=2)
        assert careful <= 2
        _, greedy = _play(handler, "sim/greedy", prompt, chat_body, cap=2)
        assert greedy > 2


def test_no_tool_calls_when_no_tools_are_offered(
    render: Callable[..., str], chat_body: Callable[..., Body]
) -> None:
    handler = SimHandler(SimConfig(seed=5))
    for i in range(30):
        body = chat_body("sim/greedy", [{"role": "user", "content": render(f"Q{i}", "yes_no")}], tools=False)
        assert "tool_calls" not in _message(_post(handler, body))


def test_sloppy_misformats_and_hedges_at_roughly_its_rates(
    render: Callable[..., str], chat_body: Callable[..., Body]
) -> None:
    handler = SimHandler(SimConfig(seed=11))
    n, bad, hedged = 300, 0, 0
    for i in range(n):
        prompt = render(f"Fictional question {i}", "single", OPTIONS)
        content = _message(
            _post(handler, chat_body("sim/sloppy", [{"role": "user", "content": prompt}], tools=False))
        )["content"]
        match = re.search(r"\\boxed\{([^}]*)\}\s*$", content)
        payload = None if match is None else match.group(1)
        pair = None if payload is None else re.fullmatch(r"([A-D]), ([A-D])", payload)
        if pair is not None:
            assert pair.group(1) < pair.group(2)  # two distinct letters, in order
            hedged += 1
        elif payload not in ("A", "B", "C", "D"):
            bad += 1
    assert 0.2 * n < bad < 0.4 * n  # configured 0.3
    well_formed = n - bad
    assert 0.2 * well_formed < hedged < 0.4 * well_formed  # configured 0.3 of the rest


async def test_personas_over_real_http(
    sim: Simulator, render: Callable[..., str], chat_body: Callable[..., Body]
) -> None:
    async with httpx.AsyncClient(headers={"Authorization": "Bearer sk-sim"}) as client:
        for model in ("sim/careful", "sim/persona-hasty", "sim/random"):
            body = chat_body(
                model, [{"role": "user", "content": render("Vessa", "multi", OPTIONS)}], tools=False
            )
            response = await client.post(sim.llm_base_url + "/chat/completions", json=body)
            assert response.status_code == 200
            assert response.json()["model"] == model


def _search_message(call_id: str, query: str, pages: list[tuple[str, str | None, int]]) -> Body:
    """A tool message in the harness's own format (``search_payload``): (snippet, body, cut) per page."""
    profile = builtin_profile()
    results = tuple(
        SearchResult(
            title=f"page {i}",
            url=f"https://vessa.example/{i}",
            content=snippet,
            raw_content=body,
            published_date="2026-02-01",
            score=0.5,
            raw_content_cut=cut,
            truncation_marker=truncation_marker(profile.truncation, 8_000, cut) if cut else "",
        )
        for i, (snippet, body, cut) in enumerate(pages)
    )
    outcome = SearchOutcome(query, date(2026, 3, 1), results, None, (), None, None, 0)
    header = StatusTexts(profile.texts).header(Counters(1, 6, 1, 4))
    payload = search_payload(profile, outcome, header)
    return {"role": "tool", "tool_call_id": call_id, "content": json.dumps(payload, ensure_ascii=False)}


def test_reader_takes_each_page_once_from_the_harness_tool_message() -> None:
    phrase = evidence.chances_phrase
    message = _search_message(
        "c1",
        "Vessa",
        [
            # A page whose body repeats its snippet counts once, from the body.
            (phrase("Civic Union", 80, "2026-02-01"), phrase("Civic Union", 80, "2026-02-01") + " More.", 0),
            # No body: the snippet is read.
            (phrase("Civic Union", 40, "2026-02-02"), None, 0),
            # A cut body (with the harness's marker) is still read.
            ("", phrase("Harbour Party", 30, "2026-02-03") + " " + "x" * 50, 9_000),
        ],
    )
    error = {"role": "tool", "tool_call_id": "c2", "content": json.dumps({"error": "missing_query"})}
    texts = tool_texts([message, error])
    assert len(texts) == 4 and "page truncated: 9000 more characters" in texts[2]
    assert evidence.read_chances(texts, OPTIONS) == {"Civic Union": 60, "Harbour Party": 30}


def test_oracle_persona_reads_evidence_from_page_bodies(
    render: Callable[..., str], chat_body: Callable[..., Body]
) -> None:
    event = "Which party wins the fictional Vessa election?"
    # The reports invert the true strengths, so only a persona that read them picks the weakest.
    weakest = min(OPTIONS, key=lambda o: evidence.strength(event, o))
    handler = SimHandler(SimConfig(seed=3))
    messages: list[Body] = [{"role": "user", "content": render(event, "single", OPTIONS)}]
    for _ in range(8):
        message = _message(_post(handler, chat_body("sim/oracle", messages, tools=True)))
        messages.append({k: v for k, v in message.items() if k in ("role", "content", "tool_calls")})
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            query = json.loads(call["function"]["arguments"])["query"]
            _, subject = evidence.split_query(query)
            body = (
                None
                if subject is None
                else evidence.chances_phrase(subject, 100 - evidence.strength(event, subject), "2026-02-01")
            )
            messages.append(_search_message(call["id"], query, [("A neutral snippet.", body, 0)]))
    content = str(messages[-1]["content"])
    assert content.endswith(f"\\boxed{{{chr(65 + OPTIONS.index(weakest))}}}")
