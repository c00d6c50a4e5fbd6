"""The Tavily request from a harness profile (§9): members, order, serialisation, where the key goes.

With the built-in profile the body must be what tavily-python 0.8.5 sent (recordings were made
through it); that is checked against tavily-python itself when it is installed, and against
literals always.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import httpx
import pytest

from oracleproto.errors import ConfigError
from oracleproto.primitives.clock import FakeClock
from oracleproto.profile import builtin_profile
from oracleproto.providers.keypool import TavilyKeyPool
from oracleproto.providers.search import TavilySearch
from oracleproto.providers.search_request import search_body, search_headers
from oracleproto.settings.model import SearchSettings
from oracleproto.sim.loopback import LoopbackServer
from tests.providers.earlier import CAPTURE_FILES, capture, current_profile, earlier_profile
from tests.providers.scripted import Script, json_response

KEY = "fake-tavily-key-0001"
CUTOFF = date(2026, 3, 27)
HOSTILE = 'Wahl — \u00e9\U0001f600\x00"\\ \ud800 {{q}}'


def settings(**kw: Any) -> SearchSettings:
    return SearchSettings(_env_file=None, **kw)  # type: ignore[call-arg]


def builtin_bytes(search: SearchSettings, query: str, max_results: int = 5) -> bytes:
    profile = builtin_profile()
    body = search_body(
        profile.search_request,
        search,
        query=query,
        end_date=CUTOFF,
        max_results=max_results,
        api_key=KEY,
        profile_name=profile.name,
    )
    return profile.request_json.search.encode(body)


SETTINGS = [
    {},
    {"include_answer": True, "search_depth": "advanced"},
    {"include_raw_content": False, "date_filter": "off"},
    {"include_answer": True, "include_raw_content": False, "max_results": 3},
]


async def tavily_python_request(search: SearchSettings, query: str, max_results: int) -> httpx.Request:
    """The request tavily-python builds for the same search (captured, never sent)."""
    from tavily import AsyncTavilyClient

    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"results": []})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = AsyncTavilyClient(api_key=KEY, api_base_url="http://127.0.0.1:9", client=http)
        await client.search(
            query,
            search_depth=search.search_depth,
            end_date=CUTOFF.isoformat() if search.date_filter == "on" else None,
            max_results=max_results,
            include_answer=search.include_answer,
            include_raw_content=search.include_raw_content,
        )
    return seen[0]


@pytest.mark.skipif(importlib.util.find_spec("tavily") is None, reason="tavily-python is not installed")
@pytest.mark.parametrize("overrides", SETTINGS)
@pytest.mark.parametrize("query", ["rain in Paris", HOSTILE])
async def test_builtin_body_is_what_tavily_python_sent(overrides: dict[str, Any], query: str) -> None:
    search = settings(**overrides)
    sent = await tavily_python_request(search, query, search.max_results)
    assert builtin_bytes(search, query, search.max_results) == sent.content
    headers = search_headers(builtin_profile().search_request, KEY, "tavily-python")
    for name, value in headers.items():
        assert sent.headers[name] == value


def test_builtin_body_literals() -> None:
    assert builtin_bytes(settings(), "rain in Paris") == (
        b'{"query": "rain in Paris", "search_depth": "basic", "end_date": "2026-03-27", '
        b'"include_answer": false, "include_raw_content": true, "max_results": 5}'
    )
    on = settings(include_answer=True, include_raw_content=False, date_filter="off", search_depth="advanced")
    assert builtin_bytes(on, "\u00e9\U0001f600") == (
        b'{"query": "\\u00e9\\ud83d\\ude00", "search_depth": "advanced", "include_answer": true, '
        b'"include_raw_content": false, "max_results": 5}'
    )
    assert search_headers(builtin_profile().search_request, KEY, "tavily-python") == {
        "Content-Type": "application/json",
        "Authorization": f"Bearer {KEY}",
        "X-Client-Source": "tavily-python",
    }


def earlier_body(search: SearchSettings, query: str = "q") -> dict[str, Any]:
    profile = earlier_profile()
    return search_body(
        profile.search_request,
        search,
        query=query,
        end_date=CUTOFF,
        max_results=5,
        api_key=KEY,
        profile_name=profile.name,
    )


def test_earlier_profile_body_members() -> None:
    body = earlier_body(settings())
    assert body == {
        "api_key": KEY,
        "query": "q",
        "end_date": "2026-03-27",
        "max_results": 5,
        "search_depth": "basic",
        "include_raw_content": "markdown",
    }
    assert list(body) == [
        "api_key",
        "query",
        "end_date",
        "max_results",
        "search_depth",
        "include_raw_content",
    ]
    assert earlier_body(settings(include_answer=True))["include_answer"] == "basic"
    assert (
        earlier_body(settings(include_answer=True, search_depth="advanced"))["include_answer"] == "advanced"
    )
    assert earlier_body(settings(include_raw_content=False))["include_raw_content"] is False
    assert "end_date" not in earlier_body(settings(date_filter="off"))
    # The key travels in the body only: no Authorization header.
    assert search_headers(earlier_profile().search_request, KEY, None) == {"Content-Type": "application/json"}


def test_current_profile_fixture_matches_the_builtin_bytes() -> None:
    profile = current_profile()
    for overrides in SETTINGS:
        search = settings(**overrides)
        body = search_body(
            profile.search_request,
            search,
            query=HOSTILE,
            end_date=CUTOFF,
            max_results=5,
            api_key=KEY,
            profile_name=profile.name,
        )
        assert profile.request_json.search.encode(body) == builtin_bytes(search, HOSTILE)


def test_a_member_the_order_does_not_list_is_a_config_error() -> None:
    profile = builtin_profile()
    request = dataclasses.replace(profile.search_request, key_order=("query", "max_results"))
    with pytest.raises(
        ConfigError, match=r"harness profile 'p': search_request.key_order does not list 'search_depth'"
    ):
        search_body(
            request, settings(), query="q", end_date=CUTOFF, max_results=5, api_key=KEY, profile_name="p"
        )


@pytest.mark.shared
@pytest.mark.parametrize("name", CAPTURE_FILES)
def test_earlier_profile_reproduces_the_captured_search_requests(name: str) -> None:
    profile = earlier_profile()
    searches = [e for e in capture(name) if e.is_search]
    assert searches
    for exchange in searches:
        sent = exchange.request_json
        body = search_body(
            profile.search_request,
            settings(),
            query=sent["query"],
            end_date=date.fromisoformat(sent["end_date"]),
            max_results=5,
            api_key=sent["api_key"],
            profile_name=profile.name,
        )
        assert profile.request_json.search.encode(body) == exchange.body, exchange.seq


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.mark.parametrize("which", ["builtin", "earlier"])
async def test_the_client_posts_the_profile_bytes_and_headers(http: httpx.AsyncClient, which: str) -> None:
    profile = builtin_profile() if which == "builtin" else earlier_profile()
    script = Script(json_response({"results": []}))
    with LoopbackServer(script) as server:
        search = settings(base_url=server.base_url + "/v1")
        tavily = TavilySearch(http, search, TavilyKeyPool([KEY], FakeClock()), FakeClock(), profile=profile)
        assert tavily.profile is profile
        await tavily.search(HOSTILE, CUTOFF, 5)
    request = script.requests[0]
    assert request.path == "/v1/search"
    assert request.body == tavily.request_bytes(KEY, HOSTILE, CUTOFF, 5)
    assert json.loads(request.body)["query"] == HOSTILE
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-client-source"] == "tavily-python"
    if which == "builtin":
        assert request.headers["authorization"] == f"Bearer {KEY}" and KEY.encode() not in request.body
    else:
        assert "authorization" not in request.headers and json.loads(request.body)["api_key"] == KEY
    # The injected client is never changed: the key rides on each request only.
    assert "authorization" not in http.headers


async def test_client_source_header_can_be_left_out(http: httpx.AsyncClient) -> None:
    script = Script(json_response({"results": []}))
    with LoopbackServer(script) as server:
        tavily = TavilySearch(
            http,
            settings(base_url=server.base_url),
            TavilyKeyPool([KEY], FakeClock()),
            FakeClock(),
            client_source=None,
        )
        await tavily.search("q", CUTOFF, 5)
    assert "x-client-source" not in script.requests[0].headers
