"""Search + leak filter end to end over loopback (paper Tables 13 and 15)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx
import pytest

from oracleproto.errors import AuthError
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.detector import LeakDetector, Verdict
from oracleproto.providers.filtered import FilteredSearch, build_audit
from oracleproto.providers.keypool import TavilyKeyPool
from oracleproto.providers.search import TavilySearch
from oracleproto.providers.types import SearchOutcome, SearchResult
from oracleproto.settings.model import DetectorSettings, LLMSettings, SearchSettings
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from tests.providers.scripted import Script, chat_body, json_response

CUTOFF = date(2025, 3, 14)
QUERY = "QUERY-TEXT-NEVER-SHOWN-TO-THE-DETECTOR"


def page(name: str, published: str | None = "2025-01-01") -> dict[str, Any]:
    return {
        "title": name,
        "url": f"https://example.org/{name}",
        "content": name,
        "raw_content": None,
        "published_date": published,
    }


class World:
    """One loopback server: Tavily ``/search`` and the detector's ``/v1/chat/completions``.

    The detector verdict depends on the page url: ``leak`` → drop, ``broken`` → HTTP 500,
    ``slow`` → keep after a delay (so completion order differs from raw order), else keep.
    """

    def __init__(
        self, results: list[dict[str, Any]], answer: str | None = "summary", search_status: int = 200
    ) -> None:
        self.results = results
        self.answer = answer
        self.search_status = search_status
        self.detector_prompts: list[str] = []
        self.script = Script(self.handle)

    def handle(self, request: LoopbackRequest) -> LoopbackResponse:
        if request.path == "/search":
            if self.search_status != 200:
                return json_response({"detail": {"error": "x"}}, status=self.search_status)
            return json_response({"query": QUERY, "answer": self.answer, "results": self.results})
        prompt = json.loads(request.body)["messages"][0]["content"]
        self.detector_prompts.append(prompt)
        if "/leak" in prompt:
            return json_response(chat_body('{"verdict": "drop", "reason": "post-cutoff"}'))
        if "/broken" in prompt:
            return json_response({}, status=500)
        delay = 0.2 if "/slow" in prompt else 0.0
        reply = json_response(chat_body('{"verdict": "keep", "reason": "fine"}'))
        reply.delay_s = delay
        return reply


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def build(
    http: httpx.AsyncClient, server: LoopbackServer, detector_on: bool = True, **det: Any
) -> FilteredSearch:
    clock = FakeClock()
    search_settings = SearchSettings(_env_file=None, base_url=server.base_url, include_answer=True)  # type: ignore[call-arg]
    search = TavilySearch(http, search_settings, TavilyKeyPool(["fake-tavily-key-0001"], clock), clock)
    if not detector_on:
        return FilteredSearch(search, None)
    llm = LLMSettings(_env_file=None, base_url=server.base_url + "/v1")  # type: ignore[call-arg]
    settings = DetectorSettings(_env_file=None, model="aux/det", **det)  # type: ignore[call-arg]
    return FilteredSearch(search, LeakDetector(http, settings, llm, clock))


async def test_drop_and_failure_remove_whole_results_in_raw_order(http: httpx.AsyncClient) -> None:
    world = World([page("slow"), page("leak", None), page("ok"), page("broken", "2025-02-02"), page("fine")])
    with LoopbackServer(world.script) as server:
        outcome = await build(http, server).search(QUERY, CUTOFF, 5)
    assert [r.title for r in outcome.results] == ["slow", "ok", "fine"]
    assert outcome.answer == "summary"
    audit = outcome.audit
    assert audit is not None
    assert audit.detector_verdicts == ("keep", "drop", "keep", "failed:server_5xx", "keep")
    assert (audit.n_results_raw, audit.n_results_kept) == (5, 3)
    assert audit.detector_error_kind == "server_5xx"
    assert audit.published_dates_raw == ("2025-01-01", None, "2025-01-01", "2025-02-02", "2025-01-01")
    record = outcome.to_record()
    assert record["n_results"] == record["n_results_kept"] == 3
    assert record["published_dates"] == list(audit.published_dates_raw)
    assert record["detector_verdicts"][3] == "failed:server_5xx"
    # the detector never saw the query
    assert world.detector_prompts and all(QUERY not in p for p in world.detector_prompts)


async def test_all_dropped_clears_the_answer(http: httpx.AsyncClient) -> None:
    world = World([page("leak"), page("broken")])
    with LoopbackServer(world.script) as server:
        outcome = await build(http, server).search(QUERY, CUTOFF, 5)
    assert outcome.results == () and outcome.answer is None
    assert outcome.audit is not None and outcome.audit.detector_verdicts == ("drop", "failed:server_5xx")


async def test_no_results_keeps_the_answer_and_empty_audit(http: httpx.AsyncClient) -> None:
    world = World([])
    with LoopbackServer(world.script) as server:
        outcome = await build(http, server).search(QUERY, CUTOFF, 5)
    assert outcome.answer == "summary"
    assert (
        outcome.audit is not None
        and outcome.audit.n_results_raw == 0
        and outcome.audit.detector_error_kind is None
    )


async def test_fail_action_keep_admits_failed_items(http: httpx.AsyncClient) -> None:
    world = World([page("broken"), page("leak")])
    with LoopbackServer(world.script) as server:
        outcome = await build(http, server, fail_action="keep").search(QUERY, CUTOFF, 5)
    assert [r.title for r in outcome.results] == ["broken"]


async def test_detector_off_has_no_audit(http: httpx.AsyncClient) -> None:
    world = World([page("leak"), page("ok")])
    with LoopbackServer(world.script) as server:
        outcome = await build(http, server, detector_on=False).search(QUERY, CUTOFF, 5)
    assert outcome.audit is None and [r.title for r in outcome.results] == ["leak", "ok"]
    assert world.detector_prompts == []
    assert "detector_verdicts" not in outcome.to_record()


async def test_failed_search_passes_through_without_detector_calls(http: httpx.AsyncClient) -> None:
    world = World([page("ok")], search_status=400)
    with LoopbackServer(world.script) as server:
        outcome = await build(http, server).search(QUERY, CUTOFF, 5)
    assert outcome.error_kind == "bad_request" and outcome.audit is None
    assert world.detector_prompts == []


async def test_search_auth_still_raises(http: httpx.AsyncClient) -> None:
    world = World([page("ok")], search_status=401)
    with LoopbackServer(world.script) as server, pytest.raises(AuthError):
        await build(http, server).search(QUERY, CUTOFF, 5)


def _outcome(n: int) -> SearchOutcome:
    results = tuple(SearchResult(f"t{i}", f"u{i}", "c", None, None) for i in range(n))
    return SearchOutcome("q", CUTOFF, results, None, (None,) * n, None, None, 0)


def test_audit_latency_is_the_slowest_item_and_first_error_wins() -> None:
    verdicts = (
        Verdict("keep", "", None, 5),
        Verdict("failed:network", "", "network", 9),
        Verdict("failed:auth", "", "auth", 3),
    )
    audit = build_audit(_outcome(3), verdicts, 1)
    assert audit.detector_latency_ms == 9 and audit.detector_error_kind == "network"


@pytest.mark.parametrize(("n", "n_verdicts", "kept"), [(2, 3, 1), (3, 2, 1), (2, 2, 3), (2, 2, -1)])
def test_audit_length_invariants_are_enforced(n: int, n_verdicts: int, kept: int) -> None:
    verdicts = tuple(Verdict("keep", "", None, 1) for _ in range(n_verdicts))
    with pytest.raises(ValueError, match="audit invariant"):
        build_audit(_outcome(n), verdicts, kept)
