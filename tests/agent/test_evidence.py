"""The evidence the forecaster sees (paper §3.3, App. B): real search + detector over loopback,
then the tool message exactly as the main model receives it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx
import pytest

from oracleproto.agent.policy import Limits
from oracleproto.agent.status import StatusTexts
from oracleproto.agent.tools import ToolRound, ToolState
from oracleproto.primitives.clock import FakeClock
from oracleproto.profile import builtin_profile
from oracleproto.providers.detector import LeakDetector
from oracleproto.providers.filtered import FilteredSearch
from oracleproto.providers.keypool import TavilyKeyPool
from oracleproto.providers.search import TavilySearch
from oracleproto.providers.types import ToolCall
from oracleproto.settings.model import DetectorSettings, LLMSettings, SearchSettings
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer

CUTOFF = date(2025, 3, 14)
CAP = SearchSettings(_env_file=None).result_max_chars  # type: ignore[call-arg]
RESULT_KEYS = ["title", "url", "published_date", "score", "content", "raw_content"]


def marker(cut: int) -> str:
    """The built-in truncation marker after a page body cut by ``cut`` characters (today's bytes)."""
    return f"\n[page truncated: {cut} more characters not shown]"


def page(name: str, **fields: Any) -> dict[str, Any]:
    """A Tavily result in the real field order; ``fields`` override or (value ``...``) remove."""
    item: dict[str, Any] = {
        "title": f"{name} title",
        "url": f"https://example.org/{name}",
        "content": f"{name} snippet",
        "score": 0.5,
        "raw_content": f"{name} body",
        "published_date": "2025-01-01",
    }
    item.update(fields)
    return {k: v for k, v in item.items() if v is not ...}


def _json(body: Any) -> LoopbackResponse:
    return LoopbackResponse(
        status=200, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )


class World:
    """Tavily ``/search`` plus a detector that drops every page whose url holds ``/leak``."""

    def __init__(self, results: list[dict[str, Any]]) -> None:
        self.results = results
        self.detector_prompts: list[str] = []

    def __call__(self, request: LoopbackRequest) -> LoopbackResponse:
        if request.path == "/search":
            return _json({"query": "q", "answer": None, "results": self.results})
        prompt = json.loads(request.body)["messages"][0]["content"]
        self.detector_prompts.append(prompt)
        verdict = "drop" if "/leak" in prompt else "keep"
        reply = {"verdict": verdict, "reason": "checked"}
        return _json(
            {
                "id": "det-1",
                "model": "aux/det",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": json.dumps(reply)},
                        "finish_reason": "stop",
                    }
                ],
            }
        )


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


async def tool_message(http: httpx.AsyncClient, world: World) -> dict[str, Any]:
    """One ``web_search`` call answered through TavilySearch + LeakDetector; the decoded payload."""
    clock = FakeClock()
    with LoopbackServer(world) as server:
        search_settings = SearchSettings(_env_file=None, base_url=server.base_url)  # type: ignore[call-arg]
        search = TavilySearch(http, search_settings, TavilyKeyPool(["fake-tavily-key-0001"], clock), clock)
        llm = LLMSettings(_env_file=None, base_url=server.base_url + "/v1")  # type: ignore[call-arg]
        detector = LeakDetector(http, DetectorSettings(_env_file=None, model="aux/det"), llm, clock)  # type: ignore[call-arg]
        profile = builtin_profile()
        round_ = ToolRound(
            profile=profile,
            status=StatusTexts(profile.texts),
            limits=Limits(max_steps=6, max_searches=4, search_enabled=True, drop_tools=True, lookahead=2),
            search=FilteredSearch(search, detector),
            tools_offered=True,
            step=1,
            end_date=CUTOFF,
            max_results=5,
            call_ids=["call_1"],
        )
        messages = await round_.answer(
            (ToolCall("call_1", "web_search", '{"query": "q"}'),), ToolState(0, [])
        )
        await search.aclose()
    assert len(messages) == 1 and messages[0]["role"] == "tool"
    payload: dict[str, Any] = json.loads(messages[0]["content"])
    payload["_raw"] = messages[0]["content"]
    return payload


async def test_tool_message_holds_score_and_page_body(http: httpx.AsyncClient) -> None:
    payload = await tool_message(http, World([page("a", score=0.73), page("b", score=1)]))
    assert list(payload)[:5] == ["query", "n_results", "results", "answer", "status"]
    assert payload["n_results"] == 2
    first = payload["results"][0]
    assert list(first) == RESULT_KEYS
    assert first == {
        "title": "a title",
        "url": "https://example.org/a",
        "published_date": "2025-01-01",
        "score": 0.73,
        "content": "a snippet",
        "raw_content": "a body",
    }
    assert payload["results"][1]["score"] == 1.0
    assert "page truncated" not in payload["_raw"]
    assert payload["answer"] is None
    assert payload["status"] == "[Harness status] step 1/6 (5 remaining) · web_search 1/4 used (3 left)."
    # The tool message's bytes: ", " and ": " separators, members in the built-in order.
    assert payload["_raw"].startswith(
        '{"query": "q", "n_results": 2, "results": [{"title": "a title", "url": '
    )
    assert payload["_raw"].endswith(
        '"answer": null, "status": "[Harness status] step 1/6 (5 remaining) · web_search 1/4 used (3 left)."}'
    )


async def test_body_over_the_cap_is_cut_at_exactly_the_cap_with_the_marker(http: httpx.AsyncClient) -> None:
    world = World(
        [page("one", raw_content="a" * CAP + "Z"), page("many", raw_content="b" * CAP + "Y" * 12_000)]
    )
    payload = await tool_message(http, world)
    one, many = (r["raw_content"] for r in payload["results"])
    assert one == "a" * CAP + marker(1)
    assert many == "b" * CAP + marker(12_000)
    assert "\n[page truncated: 12000 more characters not shown]" in many
    # The detector audited the same cut text, without the harness's marker.
    assert any("a" * CAP in p and "Z" not in p for p in world.detector_prompts)
    assert all("page truncated" not in p for p in world.detector_prompts)


async def test_body_of_exactly_the_cap_is_not_marked(http: httpx.AsyncClient) -> None:
    payload = await tool_message(http, World([page("full", raw_content="c" * CAP)]))
    assert payload["results"][0]["raw_content"] == "c" * CAP
    assert "page truncated" not in payload["_raw"]


async def test_missing_raw_content_is_passed_as_null(http: httpx.AsyncClient) -> None:
    world = World(
        [page("none", raw_content=None), page("absent", raw_content=...), page("empty", raw_content="")]
    )
    payload = await tool_message(http, world)
    none, absent, empty = payload["results"]
    assert none["raw_content"] is None and absent["raw_content"] is None
    assert list(none) == list(absent) == RESULT_KEYS
    assert empty["raw_content"] == ""
    assert none["content"] == "none snippet"


async def test_dropped_results_never_reach_the_model(http: httpx.AsyncClient) -> None:
    leak = page(
        "leak",
        title="LEAKED-TITLE",
        content="LEAKED-SNIPPET",
        raw_content="LEAKED-BODY" * 2000,
        published_date="2025-01-02",
    )
    payload = await tool_message(http, World([page("kept"), leak, page("also")]))
    assert [r["url"] for r in payload["results"]] == ["https://example.org/kept", "https://example.org/also"]
    assert payload["n_results"] == 2
    assert "LEAKED" not in payload["_raw"] and "/leak" not in payload["_raw"]


async def test_non_ascii_is_kept_and_counted_in_characters(http: httpx.AsyncClient) -> None:
    text = "Société Générale — 東京 📈 «ok»"
    world = World([page("intl", title=text, content=text, raw_content="é" * CAP + "東京")])
    payload = await tool_message(http, world)
    result = payload["results"][0]
    assert result["title"] == result["content"] == text
    assert result["raw_content"] == "é" * CAP + marker(2)
    # Written as characters, not \\u escapes: the model reads the text as published.
    assert text in payload["_raw"] and "\\u" not in payload["_raw"]
