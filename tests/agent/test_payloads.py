"""The search tool message as a harness profile writes it (schema §7): members, absent fields, the
truncation marker, the answer after the leak filter, and the failure payload.

Results are parsed from a Tavily body with the profile's truncation rules (as the search client
does), so the marker the model reads is the one the profile describes. Expected bytes are written
out by hand.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from oracleproto.agent.payloads import build_payload, failure_payload, result_payload, search_payload
from oracleproto.agent.status import Counters, StatusTexts
from oracleproto.profile import HarnessProfile, builtin_profile
from oracleproto.profile.model import PayloadEntry
from oracleproto.providers.detector import Verdict
from oracleproto.providers.filtered import FilteredSearch
from oracleproto.providers.search_results import parse_results
from oracleproto.providers.types import SearchOutcome
from tests import earlier_texts as earlier

CUTOFF = date(2026, 3, 27)
BUILTIN_STATUS = "[Harness status] step 2/6 (4 remaining) · web_search 1/4 used (3 left)."


def outcome(
    profile: HarnessProfile, items: list[dict[str, Any]], *, answer: str | None = None, max_chars: int = 8_000
) -> SearchOutcome:
    results = parse_results({"results": items}, max_chars, profile.truncation)
    dates = tuple(r.published_date for r in results)
    return SearchOutcome("q", CUTOFF, results, answer, dates, None, None, 5)


def content(profile: HarnessProfile, out: SearchOutcome) -> str:
    """The tool message content of ``out`` at step 2 of 6 with 1 of 4 searches used."""
    header = StatusTexts(profile.texts).header(Counters(2, 6, 1, 4))
    return profile.request_json.tool_message_content.dumps(search_payload(profile, out, header))


SPARSE = {"title": "T", "url": "https://u.example/1", "content": "snippet"}


def test_absent_fields_are_omitted_by_earlier_and_null_in_builtin(earlier_profile) -> None:
    assert content(earlier_profile, outcome(earlier_profile, [SPARSE])) == (
        '{"results": [{"title": "T", "url": "https://u.example/1", "content": "snippet"}]}'
    )
    assert content(builtin_profile(), outcome(builtin_profile(), [SPARSE])) == (
        '{"query": "q", "n_results": 1, "results": [{"title": "T", "url": "https://u.example/1", '
        '"published_date": null, "score": null, "content": "snippet", "raw_content": null}], '
        f'"answer": null, "status": "{BUILTIN_STATUS}"}}'
    )


def test_null_fields_are_absent_too(earlier_profile) -> None:
    item = {**SPARSE, "published_date": None, "score": None, "raw_content": None}
    assert result_payload(earlier_profile, outcome(earlier_profile, [item]).results[0]) == {
        "title": "T",
        "url": "https://u.example/1",
        "content": "snippet",
    }


def test_present_fields_in_each_profiles_order(earlier_profile) -> None:
    item = {**SPARSE, "score": 0.5, "raw_content": "body", "published_date": "2026-03-01"}
    assert content(earlier_profile, outcome(earlier_profile, [item], answer="A short answer.")) == (
        '{"results": [{"title": "T", "url": "https://u.example/1", "content": "snippet", '
        '"published_date": "2026-03-01", "score": 0.5, "raw_content": "body"}], "answer": "A short answer."}'
    )
    assert list(result_payload(builtin_profile(), outcome(builtin_profile(), [item]).results[0])) == [
        "title",
        "url",
        "published_date",
        "score",
        "content",
        "raw_content",
    ]


def test_empty_page_body(earlier_profile) -> None:
    item = {**SPARSE, "raw_content": ""}
    # raw_content_empty_is_absent: "" is absent, so omitted.
    assert "raw_content" not in result_payload(earlier_profile, outcome(earlier_profile, [item]).results[0])
    # The built-in profile shows "" as it came.
    assert (
        result_payload(builtin_profile(), outcome(builtin_profile(), [item]).results[0])["raw_content"] == ""
    )


def test_truncation_marker_is_appended_for_the_model(earlier_profile) -> None:
    long = {**SPARSE, "title": "t" * 15, "content": "c" * 12, "raw_content": "abcdefghij" + "z" * 7}
    earlier = result_payload(earlier_profile, outcome(earlier_profile, [long], max_chars=10).results[0])
    # Only raw_content is cut by the earlier profile (7 characters omitted), followed by its marker.
    assert earlier == {
        "title": "t" * 15,
        "url": "https://u.example/1",
        "content": "c" * 12,
        "raw_content": "abcdefghij\n…[truncated to 10 chars]",
    }
    builtin = result_payload(builtin_profile(), outcome(builtin_profile(), [long], max_chars=10).results[0])
    # The built-in profile cuts title and content too, but only the page body gets a marker.
    assert (builtin["title"], builtin["content"]) == ("t" * 10, "c" * 10)
    assert builtin["raw_content"] == "abcdefghij\n[page truncated: 7 more characters not shown]"


def test_a_body_of_exactly_the_limit_gets_no_marker(earlier_profile) -> None:
    item = {**SPARSE, "raw_content": "x" * 10}
    assert result_payload(earlier_profile, outcome(earlier_profile, [item], max_chars=10).results[0])[
        "raw_content"
    ] == ("x" * 10)


class _Detector:
    """Drops the results whose url is listed; everything else is kept."""

    fail_action = "drop"

    def __init__(self, drop: set[str]) -> None:
        self.drop = drop

    async def judge(self, result: Any, cutoff: date) -> Verdict:
        return Verdict("drop" if result.url in self.drop else "keep", "", None, 1)


class _Tavily:
    def __init__(self, out: SearchOutcome) -> None:
        self.out = out

    async def search(self, query: str, end_date: date, max_results: int) -> SearchOutcome:
        return self.out


ITEMS = [{**SPARSE, "url": "https://u.example/1"}, {**SPARSE, "url": "https://u.example/2"}]


@pytest.mark.parametrize(
    ("items", "dropped", "earlier_bytes"),
    [
        # Every result of a non-empty list dropped: the answer goes with them.
        (ITEMS, {"https://u.example/1", "https://u.example/2"}, '{"results": []}'),
        # One kept: the answer stays.
        (
            ITEMS,
            {"https://u.example/2"},
            '{"results": [{"title": "T", "url": "https://u.example/1", "content": "snippet"}], '
            '"answer": "Tavily says so."}',
        ),
        # Tavily found nothing: nothing was dropped, so the answer stays.
        ([], set(), '{"results": [], "answer": "Tavily says so."}'),
    ],
)
async def test_answer_is_absent_when_every_result_was_dropped(
    earlier_profile, items: list[dict[str, Any]], dropped: set[str], earlier_bytes: str
) -> None:
    raw = outcome(earlier_profile, items, answer="Tavily says so.")
    filtered = await FilteredSearch(_Tavily(raw), _Detector(dropped)).search("q", CUTOFF, 5)  # type: ignore[arg-type]
    assert content(earlier_profile, filtered) == earlier_bytes
    builtin = search_payload(builtin_profile(), filtered, "s")
    all_dropped = bool(items) and len(dropped) == len(items)
    assert builtin["answer"] == (None if all_dropped else "Tavily says so.")
    assert builtin["n_results"] == len(items) - len(dropped)


def test_failure_payloads(earlier_profile) -> None:
    failed = SearchOutcome(
        "q", CUTOFF, (), None, (), None, "server_5xx", 9, error_detail='HTTP 502: {"x": 1}'
    )
    # The status counts this search (s = 2 after it).
    texts = StatusTexts(earlier_profile.texts).values(Counters(2, 6, 2, 4))
    assert earlier_profile.request_json.tool_message_content.dumps(
        failure_payload(earlier_profile, failed, texts)
    ) == earlier.failure('HTTP 502: {"x": 1}')
    builtin_values = StatusTexts(builtin_profile().texts).values(Counters(2, 6, 2, 4))
    assert failure_payload(builtin_profile(), failed, builtin_values) == {
        "error": "search_failed",
        "kind": "server_5xx",
        "message": "the search failed (server_5xx); it counts against the budget",
        "status": "[Harness status] step 2/6 (4 remaining) · web_search 2/4 used (2 left).",
    }


def test_failure_without_a_detail_shows_an_empty_message(earlier_profile) -> None:
    failed = SearchOutcome("q", CUTOFF, (), None, (), None, "network", 9)
    texts = StatusTexts(earlier_profile.texts).values(Counters(1, 6, 1, 4))
    assert failure_payload(earlier_profile, failed, texts)["message"] == ""


def test_build_payload_fills_texts_and_keeps_json_and_order() -> None:
    entries = (
        PayloadEntry(key="z", text="{{a}}-{{b}}"),
        PayloadEntry(key="list", json_value=[1, {"k": None}], is_json=True),
        PayloadEntry(key="gone", text="<{{missing}}>"),
        PayloadEntry(key="literal", text="{{a}} {x} {{ a }} \\boxed{...}"),
    )
    # A filled value holding {{b}} is not expanded again; a placeholder whose value is None
    # removes its member.
    got = build_payload(entries, {"a": "{{b}}", "b": "B", "missing": None})
    assert got == {"z": "{{b}}-B", "list": [1, {"k": None}], "literal": "{{b}} {x} {{ a }} \\boxed{...}"}
    assert list(got) == ["z", "list", "literal"]
