"""The Tavily ``/search`` request as a harness profile writes it (profile §9); pure.

We build these bytes ourselves instead of through ``tavily-python``: that client fixes the body's
key order, serialises with ``json.dumps`` defaults (``", "``/``": "``, non-ASCII escaped) and puts
the key in an ``Authorization`` header, and a profile must control all three to reproduce another
harness's requests. With the built-in profile the body is byte for byte what ``tavily-python``
0.8.5 sent (its ``_search`` dict order, ``None`` members dropped, ``json.dumps`` defaults).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from oracleproto.profile.model import SearchRequest
from oracleproto.providers.body_order import ordered
from oracleproto.settings.model import SearchSettings

#: The header tavily-python sent to name itself; Tavily reads it for attribution only.
CLIENT_SOURCE_HEADER = "X-Client-Source"
#: Its value as tavily-python sent it (kept by default: harmless, and what recordings carry).
DEFAULT_CLIENT_SOURCE = "tavily-python"


def _include_answer(request: SearchRequest, settings: SearchSettings) -> tuple[bool, Any]:
    """Whether ``include_answer`` is sent, and its value."""
    if settings.include_answer:
        value = request.include_answer_value
        return True, settings.search_depth if value == "depth" else value
    return request.include_answer_when_off == "false", False


def search_members(
    request: SearchRequest,
    settings: SearchSettings,
    *,
    query: str,
    end_date: date,
    max_results: int,
    api_key: str,
) -> dict[str, Any]:
    """The body members a search sends, unordered (``api_key`` only when it travels in the body)."""
    members: dict[str, Any] = {
        "query": query,
        "max_results": max_results,
        "search_depth": settings.search_depth,
        "include_raw_content": request.include_raw_content_value if settings.include_raw_content else False,
    }
    if request.api_key_in == "body":
        members["api_key"] = api_key
    # SEARCH_DATE_FILTER=off records the no-date-filter scheme (App. B.6): no end_date at all.
    if settings.date_filter == "on":
        members["end_date"] = end_date.isoformat()
    sent, value = _include_answer(request, settings)
    if sent:
        members["include_answer"] = value
    return members


def search_body(
    request: SearchRequest,
    settings: SearchSettings,
    *,
    query: str,
    end_date: date,
    max_results: int,
    api_key: str,
    profile_name: str,
) -> dict[str, Any]:
    """The body members in the profile's ``search_request.key_order``."""
    members = search_members(
        request, settings, query=query, end_date=end_date, max_results=max_results, api_key=api_key
    )
    order_name = "search_request.key_order"
    return ordered(members, request.key_order, order_name=order_name, profile_name=profile_name)


def search_headers(request: SearchRequest, api_key: str, client_source: str | None) -> dict[str, str]:
    """The request headers: JSON, the key as a bearer token unless it is in the body, the client source."""
    headers = {"Content-Type": "application/json"}
    if request.api_key_in == "header":
        headers["Authorization"] = f"Bearer {api_key}"
    if client_source:
        headers[CLIENT_SOURCE_HEADER] = client_source
    return headers
