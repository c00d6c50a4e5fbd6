"""The tool-message payloads a harness profile describes: search results, failures, errors (§6, §7).

Every payload is a JSON object built member by member in the profile's order and serialised with
``request_json.tool_message_content``. What the model sees of a result is what the profile lists:
absent members left out or written as null, the page body followed by the truncation marker when
it was cut. The detector's verdicts never reach a payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oracleproto.profile.model import HarnessProfile, PayloadEntry
from oracleproto.profile.placeholders import fill, uses
from oracleproto.providers.types import SearchOutcome, SearchResult

_ABSENT: Any = object()


def build_payload(entries: tuple[PayloadEntry, ...], values: Mapping[str, str | None]) -> dict[str, Any]:
    """The object ``entries`` describe: texts filled from ``values``, ``json`` entries as written.

    A text that uses a placeholder whose value is None (an error kind without a ``code``) is left
    out: the payload then has no such member.
    """
    payload: dict[str, Any] = {}
    for entry in entries:
        if entry.is_json:
            payload[entry.key] = entry.json_value
            continue
        text = entry.text or ""
        if any(value is None and uses(text, name) for name, value in values.items()):
            continue
        payload[entry.key] = fill(text, {k: v for k, v in values.items() if v is not None})
    return payload


def _member(profile: HarnessProfile, result: SearchResult, key: str) -> Any:
    """One member of a result as the model sees it, or ``_ABSENT``."""
    if key == "title":
        return result.title
    if key == "url":
        return result.url
    if key == "content":
        return result.content
    if key == "published_date":
        return result.published_date if result.published_date is not None else _ABSENT
    if key == "score":
        return result.score if result.score is not None else _ABSENT
    body = result.raw_content
    if body is None or (body == "" and profile.tool_result.raw_content_empty_is_absent):
        return _ABSENT
    return body + result.truncation_marker


def result_payload(profile: HarnessProfile, result: SearchResult) -> dict[str, Any]:
    """One detector-approved result, members in ``result_keys`` order (§7)."""
    out: dict[str, Any] = {}
    null_absent = profile.tool_result.absent_field == "null"
    for key in profile.tool_result.result_keys:
        value = _member(profile, result, key)
        if value is _ABSENT:
            if null_absent:
                out[key] = None
            continue
        out[key] = value
    return out


def search_payload(profile: HarnessProfile, outcome: SearchOutcome, status_header: str) -> dict[str, Any]:
    """The payload of a search that returned: ``payload_keys`` in order (§7)."""
    null_absent = profile.tool_result.absent_field == "null"
    out: dict[str, Any] = {}
    for key in profile.tool_result.payload_keys:
        if key == "query":
            out[key] = outcome.query
        elif key == "n_results":
            out[key] = len(outcome.results)
        elif key == "results":
            out[key] = [result_payload(profile, r) for r in outcome.results]
        elif key == "status":
            out[key] = status_header
        elif outcome.answer is not None:
            out[key] = outcome.answer
        elif null_absent:
            out[key] = None
    return out


def failure_payload(
    profile: HarnessProfile, outcome: SearchOutcome, values: Mapping[str, str]
) -> dict[str, Any]:
    """The payload of a failed search: ``failure_payload`` filled with its kind and description."""
    filled: dict[str, str | None] = dict(values)
    filled["error_kind"] = outcome.error_kind or ""
    filled["detail"] = outcome.error_detail or ""
    return build_payload(profile.tool_result.failure_payload, filled)
