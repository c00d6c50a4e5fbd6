"""Selective refresh: ``should_refresh`` picks the calls that go live; the rest replay."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from oracleproto.context import CallContext, call_context
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from oracleproto.transport import extensions as ext
from oracleproto.transport.keys import Channel
from tests.transport.helpers import CHAT_PATH, Counting, chat_body, make_rr


class Versioned:
    """Answers ``<version>:<last user message>``; the version is bumped between recordings."""

    def __init__(self) -> None:
        self.version = "v1"

    def __call__(self, request: LoopbackRequest) -> LoopbackResponse:
        body = json.loads(request.body)
        if "query" in body:
            return LoopbackResponse(
                body=json.dumps({"results": [self.version + ":" + body["query"]]}).encode()
            )
        return LoopbackResponse(body=chat_body(f"{self.version}:{body['messages'][-1]['content']}"))


def _chat(content: str) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": content}], "temperature": 0.7}


def only_question(qid: str) -> Any:
    def predicate(channel: Channel, ctx: dict[str, Any] | None) -> bool:
        return ctx is not None and ctx["question_id"] == qid

    return predicate


async def _calls(rr: Any, base_url: str, questions: list[str]) -> dict[str, httpx.Response]:
    out: dict[str, httpx.Response] = {}
    async with (
        httpx.AsyncClient(transport=rr.transport("llm"), base_url=base_url) as llm,
        httpx.AsyncClient(transport=rr.transport("search"), base_url=base_url) as search,
    ):
        for qid in questions:
            with call_context(CallContext("m", qid, 0)):
                out[f"{qid}:llm"] = await llm.post(CHAT_PATH, json=_chat(f"prompt {qid}"))
                # The same search body from every question: one shared, context-free entry.
                out[f"{qid}:search"] = await search.post("/search", json={"query": "shared"})
    return out


async def test_only_selected_trajectories_go_live_and_the_new_generation_is_complete(tmp_path: Path) -> None:
    handler = Counting(Versioned())
    with LoopbackServer(handler) as server:
        rr = make_rr(tmp_path, "record")
        await _calls(rr, server.base_url, ["q1", "q2"])
        await rr.aclose()
        handler.handler.version = "v2"  # type: ignore[attr-defined]
        before = len(handler.requests)
        rr = make_rr(tmp_path, "refresh", should_refresh=only_question("q1"))
        got = await _calls(rr, server.base_url, ["q2", "q1"])
        await rr.aclose()
    live = handler.requests[before:]
    assert [
        json.loads(r.body).get("query") or json.loads(r.body)["messages"][0]["content"] for r in live
    ] == [
        "prompt q1",
        "shared",
    ]
    assert b"v2:prompt q1" in got["q1:llm"].content and got["q1:llm"].extensions[ext.FROM_CASSETTE] is False
    assert b"v1:prompt q2" in got["q2:llm"].content and got["q2:llm"].extensions[ext.FROM_CASSETTE] is True
    # q2 ran first and was served the old shared search; q1 re-recorded it afterwards.
    assert b"v1:shared" in got["q2:search"].content
    assert b"v2:shared" in got["q1:search"].content
    gens = make_rr(tmp_path, "replay").store.entries_by_generation()
    assert len(gens[0]) == len(gens[1]) == 3  # two llm entries and the shared search, in both
    new = {e.key: e for e in gens[1]}
    old = {e.key: e for e in gens[0]}
    assert set(new) == set(old)
    carried = [k for k in new if new[k].body == old[k].body]
    assert len(carried) == 1 and b"v1:prompt q2" in new[carried[0]].body
    assert new[carried[0]].recorded_at == old[carried[0]].recorded_at


async def test_unselected_reader_of_a_refreshed_shared_entry_still_gets_the_old_one(tmp_path: Path) -> None:
    handler = Versioned()
    with LoopbackServer(handler) as server:
        rr = make_rr(tmp_path, "record")
        await _calls(rr, server.base_url, ["q1", "q2"])
        await rr.aclose()
        handler.version = "v2"
        rr = make_rr(tmp_path, "refresh", should_refresh=only_question("q1"))
        got = await _calls(rr, server.base_url, ["q1", "q2"])
        await rr.aclose()
    assert b"v2:shared" in got["q1:search"].content
    assert b"v1:shared" in got["q2:search"].content  # replay of q2 stays exact
    [search] = [
        e for e in make_rr(tmp_path, "replay").store.entries_by_generation()[1] if e.channel == "search"
    ]
    assert b"v2:shared" in search.body and search.requests == 2


async def test_an_unselected_call_that_was_never_recorded_goes_live(tmp_path: Path) -> None:
    handler = Counting(Versioned())
    with LoopbackServer(handler) as server:
        rr = make_rr(tmp_path, "record")
        await _calls(rr, server.base_url, ["q1"])
        await rr.aclose()
        rr = make_rr(tmp_path, "refresh", should_refresh=only_question("nothing"))
        got = await _calls(rr, server.base_url, ["q1", "q3"])
        await rr.aclose()
    assert got["q1:llm"].extensions[ext.FROM_CASSETTE] is True
    assert got["q3:llm"].extensions[ext.FROM_CASSETTE] is False
    assert len(handler.requests) == 3  # q1's two recorded calls, then only q3's new llm call
