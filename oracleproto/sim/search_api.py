"""Tavily-compatible ``POST /search`` over the simulator corpus.

Request: JSON body as ``tavily-python`` 0.8.5 sends it (query, search_depth, max_results,
include_answer, include_raw_content, end_date, …); the key comes in ``Authorization: Bearer``
(or ``api_key`` in the body, as older clients send it). Response fields follow the real
recorded payloads: query, follow_up_questions, answer, images, results[title, url, content,
score, raw_content, published_date], response_time, request_id.
"""

from __future__ import annotations

import json
import uuid
from datetime import date
from typing import Any

from oracleproto.sim import corpus, demo_corpus, demo_world, evidence, rng

#: Tavily's real 401 wording (2025).
UNAUTHORIZED = "Unauthorized: missing or invalid API key."
_MAX_RESULTS_LIMIT = 20


class SearchRequestError(ValueError):
    """The request body is invalid; the message is Tavily-style ``detail.error`` text."""


def detail_body(message: str) -> bytes:
    """Tavily's error envelope ``{"detail": {"error": …}}`` (indented, as the API sends it)."""
    return (json.dumps({"detail": {"error": message}}, indent=4) + "\n").encode("utf-8")


def api_key(headers: dict[str, str], body: dict[str, Any]) -> str | None:
    """The key from ``Authorization: Bearer`` or, failing that, the body's ``api_key``."""
    auth = headers.get("authorization", "")
    if auth.lower().startswith("bearer ") and auth[7:].strip():
        return auth[7:].strip()
    key = body.get("api_key")
    return key if isinstance(key, str) and key else None


def _parse_end_date(value: Any) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise SearchRequestError(f"Invalid end_date {value!r}: expected YYYY-MM-DD.") from None


def _max_results(value: Any) -> int:
    if value is None:
        return 5
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_RESULTS_LIMIT:
        raise SearchRequestError(f"max_results must be an integer between 0 and {_MAX_RESULTS_LIMIT}.")
    return value


def documents(seed: int, query: str, end_date: date | None, max_results: int) -> list[corpus.Document]:
    """The demo corpus for a demo event's query, the seeded synthetic corpus for anything else."""
    topic, subject = evidence.split_query(query)
    event = demo_world.lookup(topic)
    if event is None:
        return corpus.search(seed, query, end_date, max_results)
    # An unknown subject is a free-form query about the event: answer with round-ups.
    known = None if subject is None else event.subject(subject)
    return demo_corpus.search(seed, event, known, end_date, max_results)


def search_body(
    seed: int, body: dict[str, Any], request_key: str, *, honour_end_date: bool = True
) -> dict[str, Any]:
    """The ``/search`` response for a validated-on-the-fly request body.

    ``honour_end_date=False`` plays a search engine that ignores the date limit (leak tests).
    """
    query = body.get("query")
    if not isinstance(query, str) or not query.strip():
        raise SearchRequestError("Query is missing or empty.")
    end_date = _parse_end_date(body.get("end_date"))
    limit = _max_results(body.get("max_results"))
    docs = documents(seed, query, end_date if honour_end_date else None, limit)
    include_raw = bool(body.get("include_raw_content"))
    results = [
        {
            "title": d.title,
            "url": d.url,
            "content": d.content,
            "score": d.score,
            "raw_content": d.raw_content if include_raw else None,
            "published_date": d.published_date.isoformat() if d.published_date else None,
        }
        for d in docs
    ]
    answer = None
    if body.get("include_answer") and docs:
        answer = f"Sources on this topic report: {docs[0].content.split('. ')[0].rstrip('.')}."
    return {
        "query": query,
        "follow_up_questions": None,
        "answer": answer,
        "images": [],
        "results": results,
        "response_time": round(0.4 + 1.2 * rng.unit("response_time", request_key), 2),
        "request_id": str(uuid.UUID(bytes=rng.digest("request_id", request_key)[:16], version=4)),
    }
