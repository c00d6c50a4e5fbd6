"""Real wire traffic: tavily-python through the transport, real payloads byte-for-byte, vcrpy, secrets."""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import random
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from pytest_socket import disable_socket, enable_socket, socket_allow_hosts
from tavily import AsyncTavilyClient
from vcr.serialize import deserialize
from vcr.serializers import yamlserializer

from oracleproto.context import CallContext, call_context
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from oracleproto.transport.store import rebuild_index
from tests.transport.helpers import CHAT_PATH, Counting, all_bytes_under, echo_chat, make_rr

FAKE_LLM_KEY = "planted-llm-key-7f3a9c1e5b"
FAKE_TAVILY_KEY = "planted-search-key-42e8d0"
FAKE_DETECTOR_KEY = "planted-detector-key-9b1c77"


def _unblock() -> None:
    enable_socket()
    socket_allow_hosts(["127.0.0.1", "::1"])


def tavily_handler(request: LoopbackRequest) -> LoopbackResponse:
    """A Tavily-shaped /search endpoint that echoes the query."""
    body = json.loads(request.body)
    result = {"title": body["query"], "url": "https://example.org/a", "content": "c", "score": 0.5}
    payload = {
        "query": body["query"],
        "answer": None,
        "images": [],
        "results": [result],
        "response_time": 0.1,
    }
    return LoopbackResponse(body=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})


async def test_tavily_client_records_and_replays_shared_across_samples(tmp_path: Path) -> None:
    handler = Counting(tavily_handler)
    with LoopbackServer(handler) as server:
        rr = make_rr(tmp_path, "record")
        http = httpx.AsyncClient(transport=rr.transport("search"))
        tavily = AsyncTavilyClient(api_key=FAKE_TAVILY_KEY, api_base_url=server.base_url, client=http)
        live = []
        for sample in range(3):
            with call_context(CallContext("m", "q", sample)):
                live.append(await tavily.search("election result", max_results=3))
        await http.aclose()
        await rr.aclose()
    assert len(handler.requests) == 1  # shared across samples: deduplicated
    assert handler.requests[0].headers["authorization"] == f"Bearer {FAKE_TAVILY_KEY}"
    [entry] = rr.store.effective_entries()
    assert entry.requests == 3
    assert FAKE_TAVILY_KEY.encode() not in all_bytes_under(tmp_path)

    disable_socket()
    try:
        rr2 = make_rr(tmp_path, "replay")
        http = httpx.AsyncClient(transport=rr2.transport("search"))
        tavily = AsyncTavilyClient(api_key="other-search-key-0", api_base_url=server.base_url, client=http)
        with call_context(CallContext("other-model", "q2", 0)):
            assert await tavily.search("election result", max_results=3) == live[0]
        await http.aclose()
        await rr2.aclose()
    finally:
        _unblock()


def _payloads(root: Path) -> list[tuple[str, int, bytes]]:
    """(name, status, raw body) of every chat/search response in the real-payload cassettes."""
    out = []
    for path in sorted(root.rglob("*.y*ml")):
        doc = yaml.load(path.read_text(), Loader=yaml.CSafeLoader)
        for i, item in enumerate(doc.get("interactions") or []):
            response = item["response"]
            if "parsed_body" in response:
                parsed = response["parsed_body"]
                raw = parsed.encode() if isinstance(parsed, str) else json.dumps(parsed).encode()
            else:
                raw_body = response.get("body", {}).get("string", "")
                raw = raw_body if isinstance(raw_body, bytes) else raw_body.encode()
            out.append((f"{path.relative_to(root)}#{i}", response["status"]["code"], raw))
    return out


@pytest.mark.shared
@pytest.mark.slow
async def test_real_payloads_record_and_replay_byte_for_byte(tmp_path: Path, shared_payloads: Path) -> None:
    payloads = _payloads(shared_payloads)
    assert len(payloads) > 50
    by_name = {name: (status, body) for name, status, body in payloads}

    def handler(request: LoopbackRequest) -> LoopbackResponse:
        status, body = by_name[json.loads(request.body)["messages"][0]["content"]]
        return LoopbackResponse(status=status, body=body, headers={"Content-Type": "application/json"})

    with LoopbackServer(handler) as server:
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=server.base_url) as client:
            for name, expected in by_name.items():
                body = {"model": "m", "messages": [{"role": "user", "content": name}], "temperature": 0}
                resp = await client.post(CHAT_PATH, json=body)
                assert (resp.status_code, resp.content) == expected, name
        await rr.aclose()

    disable_socket()
    try:
        rr2 = make_rr(tmp_path, "replay")
        async with httpx.AsyncClient(transport=rr2.transport("llm"), base_url=server.base_url) as client:
            for name, expected in by_name.items():
                body = {"model": "m", "messages": [{"role": "user", "content": name}], "temperature": 0}
                resp = await client.post(CHAT_PATH, json=body)
                assert (resp.status_code, resp.content) == expected, name
        await rr2.aclose()
    finally:
        _unblock()

    # vcrpy loads the same files and sees the same interactions.
    for path in sorted(tmp_path.rglob("*.yaml")):
        requests, responses = deserialize(path.read_text(), yamlserializer)
        assert len(requests) == len(responses) == len(rr2.store.effective_entries())
        for request, response in zip(requests, responses, strict=True):
            name = json.loads(request.body)["messages"][0]["content"]
            assert request.uri.endswith(CHAT_PATH)
            assert (response["status"]["code"], response["body"]["string"]) == by_name[name]


async def test_planted_keys_never_reach_disk_on_any_channel(tmp_path: Path) -> None:
    def leaky(request: LoopbackRequest) -> LoopbackResponse:
        # A server that echoes the credential (as OpenAI 401 messages do) and sets a cookie.
        auth = request.headers.get("authorization", "")
        return LoopbackResponse(
            status=401,
            body=json.dumps({"error": f"bad key {auth}", "body": request.body.decode()}).encode(),
            headers={"Content-Type": "application/json", "Set-Cookie": f"session={auth}"},
        )

    cassettes, cache = tmp_path / "cassettes", tmp_path / "cache"
    with LoopbackServer(leaky) as server:
        rr = make_rr(cassettes, "record", cache_dir=cache)
        llm = httpx.AsyncClient(
            transport=rr.transport("llm"),
            base_url=server.base_url,
            headers={"Authorization": f"Bearer {FAKE_LLM_KEY}"},
        )
        det = httpx.AsyncClient(
            transport=rr.transport("detector"),
            base_url=server.base_url,
            headers={"api-key": FAKE_DETECTOR_KEY, "Cookie": f"c={FAKE_DETECTOR_KEY}"},
        )
        search = httpx.AsyncClient(transport=rr.transport("search"), base_url=server.base_url)
        with call_context(CallContext("m", "q", 0)):
            await llm.post(CHAT_PATH, json={"model": "m", "messages": [], "api_key": FAKE_LLM_KEY})
            await det.post(CHAT_PATH, json={"model": "d", "messages": [], "temperature": 0})
            await search.post(
                f"/search?api_key={FAKE_TAVILY_KEY}", json={"query": "x", "api_key": FAKE_TAVILY_KEY}
            )
        for client in (llm, det, search):
            await client.aclose()
        await rr.aclose()
    written = all_bytes_under(tmp_path)
    assert b"[REDACTED]" in written
    for key in (FAKE_LLM_KEY, FAKE_TAVILY_KEY, FAKE_DETECTOR_KEY):
        assert key.encode() not in written, key
        assert key[4:].encode() not in written, key


async def _record_concurrently(cassettes: Path, base_url: str, n: int, seed: int) -> None:
    rr = make_rr(cassettes, "record")
    # httpx's default 5 s timeout includes waiting for a pooled connection: 300 requests at once on a
    # loaded 2-core machine can wait longer than that, which is load, not a transport defect.
    async with httpx.AsyncClient(
        transport=rr.transport("llm"),
        base_url=base_url,
        limits=httpx.Limits(max_connections=50),
        timeout=httpx.Timeout(120.0),
    ) as client:

        async def one(i: int) -> None:
            with call_context(CallContext("m", f"q{i % 20}", i // 20)):
                resp = await client.post(
                    CHAT_PATH,
                    json={
                        "model": "m",
                        "messages": [{"role": "user", "content": f"prompt {i} seed-independent"}],
                    },
                )
                assert (
                    json.loads(resp.content)["choices"][0]["message"]["content"]
                    == f"prompt {i} seed-independent"[::-1]
                )

        order = list(range(n))
        random.Random(seed).shuffle(order)
        await asyncio.gather(*(one(i) for i in order))
    await rr.aclose()


@pytest.mark.slow
async def test_hundreds_of_concurrent_requests_give_identical_bytes_in_any_order(tmp_path: Path) -> None:
    def jittery(request: LoopbackRequest) -> LoopbackResponse:
        response = echo_chat(request)
        response.delay_s = random.random() * 0.01
        return response

    with LoopbackServer(jittery) as server:
        await _record_concurrently(tmp_path / "a", server.base_url, 300, seed=1)
        await _record_concurrently(tmp_path / "b", server.base_url, 300, seed=2)
    a, b = (tmp_path / "a" / "llm" / "m.yaml").read_bytes(), (tmp_path / "b" / "llm" / "m.yaml").read_bytes()
    assert a == b
    assert len(yaml.load(a, Loader=yaml.CSafeLoader)["interactions"]) == 300
    assert not list((tmp_path / "a" / ".journal").glob("*.jsonl"))


def _process_worker(cassettes: str, cache: str, base_url: str, offset: int) -> None:
    async def run() -> None:
        rr = make_rr(Path(cassettes), "record", cache_dir=Path(cache), flush_every_s=0.0)
        async with httpx.AsyncClient(transport=rr.transport("search"), base_url=base_url) as client:
            for i in range(40):
                await client.post("/search", json={"query": f"q{offset + i}"})
        await rr.aclose()

    asyncio.run(run())


def test_two_processes_share_one_cassette_dir_and_cache(tmp_path: Path) -> None:
    cassettes, cache = tmp_path / "cassettes", tmp_path / "cache"
    with LoopbackServer(tavily_handler) as server:
        ctx = multiprocessing.get_context("fork")
        procs = [
            ctx.Process(target=_process_worker, args=(str(cassettes), str(cache), server.base_url, k * 1000))
            for k in range(2)
        ]
        for p in procs:
            p.start()
        try:
            for p in procs:
                p.join(300)  # generous: a loaded 2-core machine can stall a process for long
        finally:
            for p in procs:
                if p.is_alive():
                    p.kill()
                    p.join()
        assert [p.exitcode for p in procs] == [0, 0]
    rr = make_rr(cassettes, "replay", cache_dir=cache)
    assert rr.store._loaded is False  # the index both processes maintained is fresh
    assert len(rr.store.effective_entries()) == 80
    assert rebuild_index(cassettes, cache) == 80
    queries: list[Any] = sorted(json.loads(e.request_body)["query"] for e in rr.store.effective_entries())
    assert queries == sorted([f"q{i}" for i in range(40)] + [f"q{1000 + i}" for i in range(40)])
    rr.close()


async def test_concurrent_identical_searches_go_live_once(tmp_path: Path) -> None:
    def slow(request: LoopbackRequest) -> LoopbackResponse:
        response = tavily_handler(request)
        response.delay_s = 0.05
        return response

    handler = Counting(slow)
    with LoopbackServer(handler) as server:
        rr = make_rr(tmp_path, "record")
        async with httpx.AsyncClient(transport=rr.transport("search"), base_url=server.base_url) as client:

            async def one(sample: int) -> bytes:
                with call_context(CallContext("m", "q", sample)):
                    return (await client.post("/search", json={"query": "same"})).content

            bodies = await asyncio.gather(*(one(s) for s in range(20)))
        await rr.aclose()
    assert len(handler.requests) == 1
    assert len(set(bodies)) == 1
    [entry] = rr.store.effective_entries()
    assert entry.requests == 20
    assert rr.session_stats()["search"] == {
        "requests": 20,
        "from_cassette": 19,
        "live": 1,
        "distinct_keys": 1,
        "waited": 19,
    }
