"""Tavily results as ``SearchResult``s, cut to the run's limit (profile §7, ``truncation``).

The cut happens here, once, before the detector sees a result, so the detector audits exactly
the text the model may see. Which fields are cut and the marker that follows a cut page body are
the harness profile's; the limit M is ``SEARCH_RESULT_MAX_CHARS``. Lengths are in code points.
"""

from __future__ import annotations

import math
from typing import Any

from oracleproto.profile.builtin import builtin_profile
from oracleproto.profile.model import Truncation
from oracleproto.profile.placeholders import fill
from oracleproto.providers.types import SearchResult


def _score(value: Any) -> float | None:
    # A non-finite score would serialise as NaN, which is not JSON a provider accepts.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _text(value: Any) -> str:
    """Tavily's value as a string (§7: "" when absent or null; other JSON values in Python's
    spelling, a falsy one too: 0 is "0", false is "False")."""
    return "" if value is None else str(value)


def truncation_marker(rules: Truncation, max_chars: int, omitted: int) -> str:
    """The filled marker that follows a page body cut to ``max_chars`` with ``omitted`` characters gone."""
    return fill(rules.marker, {"max_chars": str(max_chars), "omitted_chars": str(omitted)})


def _result(item: dict[str, Any], max_chars: int, rules: Truncation) -> SearchResult:
    cut = set(rules.fields)

    def limited(name: str, text: str) -> str:
        return text[:max_chars] if name in cut else text

    raw_content = item.get("raw_content")
    # Absent, null or not a string: no page body (None); "" stays "" (the profile may show it).
    body = raw_content if isinstance(raw_content, str) else None
    omitted = 0
    if body is not None and "raw_content" in cut and len(body) > max_chars:
        omitted = len(body) - max_chars
        body = body[:max_chars]
    published = item.get("published_date")
    return SearchResult(
        title=limited("title", _text(item.get("title"))),
        url=limited("url", _text(item.get("url"))),
        content=limited("content", _text(item.get("content"))),
        raw_content=body,
        published_date=published if isinstance(published, str) else None,
        score=_score(item.get("score")),
        raw_content_cut=omitted,
        truncation_marker=truncation_marker(rules, max_chars, omitted) if omitted else "",
    )


def parse_results(
    data: dict[str, Any], max_chars: int, truncation: Truncation | None = None
) -> tuple[SearchResult, ...]:
    """Tavily ``results`` as ``SearchResult``s, the profile's fields cut to ``max_chars``.

    ``truncation`` defaults to the built-in profile's (title, content and page body cut; the url
    whole). Raises ``ValueError`` when ``results`` or one of its items has the wrong type.
    """
    rules = truncation if truncation is not None else builtin_profile().truncation
    raw = data.get("results", [])
    if not isinstance(raw, list):
        raise ValueError("Tavily body field 'results' is not a list")
    out: list[SearchResult] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ValueError(f"Tavily result {i} is not an object")
        out.append(_result(item, max_chars, rules))
    return tuple(out)
