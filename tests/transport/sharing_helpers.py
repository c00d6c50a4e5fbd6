"""A fake provider and a small two-sample workload for the request-sharing tests."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from oracleproto.context import CallContext, call_context, logical_call
from oracleproto.transport.recorder import RecordReplay
from tests.transport.helpers import CHAT_PATH, chat_body

BASE = "http://provider.test"
SEARCH = {"query": "same query", "max_results": 5}
DETECT = {"model": "judge", "messages": [{"role": "user", "content": "audit page"}], "temperature": 0}
PROMPT = {"model": "m", "messages": [{"role": "user", "content": "same prompt"}], "temperature": 0.7}


class Provider(httpx.AsyncBaseTransport):
    """Answers every live request with a body naming its version and arrival number.

    Every live call therefore gets a distinct body, so a test can tell which recording a replayed
    call was served. ``status(channel, n)`` scripts a failure for the n-th arrival.
    """

    def __init__(self, version: str = "v1") -> None:
        self.version = version
        self.requests: list[httpx.Request] = []
        self.failing: dict[tuple[str, int], int] = {}

    def arrivals(self, path: str) -> int:
        return sum(1 for r in self.requests if r.url.path == path)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self.answer(request)

    def answer(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        n = self.arrivals(path)
        self.requests.append(request)
        status = self.failing.get((path, n), 200)
        tag = f"{self.version}:{path}:{n}"
        if status != 200:
            return httpx.Response(status, content=json.dumps({"error": tag}).encode())
        if path == "/search":
            return httpx.Response(200, content=json.dumps({"results": [tag]}).encode())
        verdict = json.dumps({"verdict": "keep", "reason": tag})
        return httpx.Response(200, content=chat_body(verdict))


class SyncProvider(httpx.BaseTransport):
    """The same provider behind the sync transport."""

    def __init__(self, provider: Provider) -> None:
        self.provider = provider

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.provider.answer(request)


Calls = dict[tuple[int, str, int], bytes]


async def two_identical_per_channel(rr: RecordReplay, samples: tuple[int, ...] = (0, 1)) -> Calls:
    """Per sample (model m, question q, step 0): one main-LLM call, two byte-identical searches in a
    row, then two byte-identical detector requests in flight together (as ``FilteredSearch`` judges a
    page listed twice). Returns each call's response body by (sample, channel, index)."""
    out: Calls = {}
    async with (
        httpx.AsyncClient(transport=rr.transport("llm"), base_url=BASE) as llm,
        httpx.AsyncClient(transport=rr.transport("search"), base_url=BASE) as search,
        httpx.AsyncClient(transport=rr.transport("detector"), base_url=BASE) as detector,
    ):

        async def judge() -> bytes:
            with logical_call():
                return (await detector.post(CHAT_PATH, json=DETECT)).content

        for sample in samples:
            with call_context(CallContext("m", "q", sample)):
                with logical_call():
                    out[(sample, "llm", 0)] = (await llm.post(CHAT_PATH, json=PROMPT)).content
                for i in range(2):
                    with logical_call():
                        out[(sample, "search", i)] = (await search.post("/search", json=SEARCH)).content
                judged = await asyncio.gather(judge(), judge())
                for i, body in enumerate(judged):
                    out[(sample, "detector", i)] = body
    return out


def tag_of(body: bytes) -> Any:
    """The provider's tag inside a search or detector body (which live call produced it)."""
    doc = json.loads(body)
    if "results" in doc:
        return doc["results"][0]
    if "error" in doc:
        return doc["error"]
    return json.loads(doc["choices"][0]["message"]["content"])["reason"]
