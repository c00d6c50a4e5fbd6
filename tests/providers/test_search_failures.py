"""Failed searches carry the earlier harness's description of the failure (``error_detail``), scrubbed.

Also: a failure that is not an HTTP exchange (a replay miss) is not a search outcome and propagates,
as it does on the LLM and detector channels.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx
import pytest

from oracleproto.errors import ReplayMissError
from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.keypool import TavilyKeyPool
from oracleproto.providers.search import TavilySearch
from oracleproto.settings.model import SearchSettings
from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer
from tests.providers.scripted import Script, json_response

KEY = "fake-tavily-key-with-length-0001"
CUTOFF = date(2026, 3, 1)


def settings(server: LoopbackServer | None = None, **kw: Any) -> SearchSettings:
    base = server.base_url if server is not None else "http://127.0.0.1:9"
    return SearchSettings(_env_file=None, base_url=base, retry_max=0, **kw)  # type: ignore[call-arg]


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


async def failed(http: httpx.AsyncClient, response: LoopbackResponse, **kw: Any) -> Any:
    with LoopbackServer(Script(response)) as server:
        search = TavilySearch(http, settings(server, **kw), TavilyKeyPool([KEY], FakeClock()), FakeClock())
        return await search.search("q", CUTOFF, 5)


async def test_http_failure_keeps_the_first_500_characters_of_the_body(http: httpx.AsyncClient) -> None:
    text = "é" * 300 + "x" * 400
    outcome = await failed(http, LoopbackResponse(status=502, body=text.encode()))
    assert outcome.error_kind == "server_5xx"
    assert outcome.error_detail == "HTTP 502: " + text[:500]
    assert "error_detail" not in outcome.to_record() and "x" * 300 not in json.dumps(outcome.to_record())


async def test_non_json_200_is_described_with_the_decoder_message(http: httpx.AsyncClient) -> None:
    outcome = await failed(http, LoopbackResponse(status=200, body=b"<html>maintenance</html>"))
    assert outcome.error_kind == "unknown"
    assert outcome.error_detail == "Tavily returned non-JSON body: Expecting value: line 1 column 1 (char 0)"


async def test_json_that_is_not_an_object_or_bad_results(http: httpx.AsyncClient) -> None:
    listed = await failed(http, json_response([1, 2]))
    assert (
        listed.error_kind == "unknown" and listed.error_detail == "Tavily returned a JSON list, not an object"
    )
    junk = await failed(http, json_response({"results": "none"}))
    assert junk.error_detail == "malformed Tavily results: Tavily body field 'results' is not a list"


async def test_network_failure_is_class_and_message(http: httpx.AsyncClient) -> None:
    outcome = await failed(http, LoopbackResponse(drop_connection=True))
    assert outcome.error_kind == "network"
    assert outcome.error_detail is not None
    name, _, _ = outcome.error_detail.partition(": ")
    assert name in {"RemoteProtocolError", "ReadError", "ConnectError"}, outcome.error_detail


async def test_the_key_never_reaches_the_detail(http: httpx.AsyncClient) -> None:
    echo = json.dumps({"detail": {"error": f"Bad request for key {KEY}; key prefix {KEY[:20]}"}}).encode()
    outcome = await failed(http, LoopbackResponse(status=400, body=echo))
    assert outcome.error_kind == "bad_request" and outcome.error_detail is not None
    assert KEY not in outcome.error_detail and KEY[:20] not in outcome.error_detail
    assert outcome.error_detail.startswith("HTTP 400: ")


async def test_a_successful_search_has_no_detail(http: httpx.AsyncClient) -> None:
    outcome = await failed(http, json_response({"results": []}))
    assert outcome.error_kind is None and outcome.error_detail is None


async def test_a_replay_miss_propagates_instead_of_becoming_a_failed_search() -> None:
    def miss(request: httpx.Request) -> httpx.Response:
        raise ReplayMissError("replay miss on channel search: no entry")

    async with httpx.AsyncClient(transport=httpx.MockTransport(miss)) as http:
        search = TavilySearch(http, settings(), TavilyKeyPool([KEY], FakeClock()), FakeClock())
        with pytest.raises(ReplayMissError, match="replay miss on channel search"):
            await search.search("q", CUTOFF, 5)
