"""Tavily-compatible /search through the real tavily-python client."""

from __future__ import annotations

from datetime import date

import httpx
import pytest
from tavily import AsyncTavilyClient
from tavily.errors import BadRequestError

from oracleproto.sim.detector import verdict
from oracleproto.sim.server import Simulator

QUERIES = [f"Fictional Vessa question {i} — Harbour Party" for i in range(12)] + ["Vessa ferry"]


def _client(sim: Simulator, http: httpx.AsyncClient, key: str = "tvly-sim") -> AsyncTavilyClient:
    return AsyncTavilyClient(api_key=key, api_base_url=sim.search_base_url, client=http)


async def test_end_date_is_honoured_but_leaky_bodies_get_through(sim: Simulator) -> None:
    end = date(2026, 3, 1)
    leaky = kept = 0
    async with httpx.AsyncClient() as http:
        client = _client(sim, http)
        for query in QUERIES:
            res = await client.search(
                query, end_date=end.isoformat(), max_results=10, include_raw_content=True
            )
            assert 0 < len(res["results"]) <= 10
            for r in res["results"]:
                assert r["published_date"] is None or date.fromisoformat(r["published_date"]) <= end
                assert r["raw_content"]
                item = {**r, "cutoff_date": end.isoformat()}
                v, _ = verdict("\n".join(f"{k}: {item[k]}" for k in item))
                leaky += v == "drop"
                kept += v == "keep"
    assert leaky > 0 and kept > leaky


async def test_without_end_date_results_fall_on_both_sides_of_the_anchor(sim: Simulator) -> None:
    dates: list[date] = []
    async with httpx.AsyncClient() as http:
        client = _client(sim, http)
        for query in QUERIES:
            res = await client.search(query, max_results=20)
            dates += [date.fromisoformat(r["published_date"]) for r in res["results"] if r["published_date"]]
            assert all(r["raw_content"] is None for r in res["results"])
    anchor = date(2026, 3, 1)
    assert any(d > anchor for d in dates) and any(d <= anchor for d in dates)


async def test_same_query_same_results_and_max_results_and_answer(sim: Simulator) -> None:
    async with httpx.AsyncClient() as http:
        client = _client(sim, http)
        first = await client.search("Vessa ferry — Yes", max_results=3, include_answer=True)
        again = await client.search("Vessa ferry — Yes", max_results=3, include_answer=True)
    assert len(first["results"]) == 3
    assert first["results"] == again["results"]
    assert first["request_id"] != again["request_id"]
    assert isinstance(first["answer"], str) and first["answer"]
    scores = [r["score"] for r in first["results"]]
    assert scores == sorted(scores, reverse=True)


async def test_bad_requests_are_400_with_a_specific_message(sim: Simulator) -> None:
    async with httpx.AsyncClient() as http:
        client = _client(sim, http)
        with pytest.raises(BadRequestError, match=r"Invalid end_date 'March 1': expected YYYY-MM-DD\."):
            await client.search("x", end_date="March 1")
    response = httpx.post(
        sim.search_base_url + "/search", json={"query": " "}, headers={"Authorization": "Bearer k"}
    )
    assert response.status_code == 400 and response.json()["detail"]["error"] == "Query is missing or empty."
    too_many = httpx.post(
        sim.search_base_url + "/search",
        json={"query": "x", "max_results": 50},
        headers={"Authorization": "Bearer k"},
    )
    assert too_many.status_code == 400 and "between 0 and 20" in too_many.text


def test_missing_key_is_401_and_body_key_is_accepted(sim: Simulator) -> None:
    missing = httpx.post(sim.search_base_url + "/search", json={"query": "x"})
    assert missing.status_code == 401
    in_body = httpx.post(sim.search_base_url + "/search", json={"query": "x", "api_key": "tvly-old-style"})
    assert in_body.status_code == 200
