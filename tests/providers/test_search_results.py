"""Search results and their truncation per harness profile (§7): which fields, the marker, code points."""

from __future__ import annotations

from typing import Any

import pytest

from oracleproto.profile import builtin_profile
from oracleproto.providers.search_results import parse_results, truncation_marker
from tests.providers.earlier import current_profile, earlier_profile

M = 10
#: Astral characters count as one character each (code points, not UTF-16 units or bytes).
LONG = "\U0001f600" * 4 + "abcdefghijkl"  # 16 characters


def body(**item: Any) -> dict[str, Any]:
    return {"results": [item]}


def test_builtin_cuts_title_content_and_body_but_not_the_url() -> None:
    (result,) = parse_results(body(title=LONG, url=LONG, content=LONG, raw_content=LONG), M)
    assert result.title == LONG[:M] and result.content == LONG[:M] and result.url == LONG
    assert result.raw_content == LONG[:M] == "\U0001f600" * 4 + "abcdef"
    assert result.raw_content_cut == 6
    assert result.truncation_marker == "\n[page truncated: 6 more characters not shown]"
    # The fixture profile of oracleproto's behaviour says the same.
    assert parse_results(
        body(title=LONG, url=LONG, content=LONG, raw_content=LONG), M, current_profile().truncation
    ) == (result,)


def test_earlier_profile_cuts_only_the_page_body_with_its_marker() -> None:
    rules = earlier_profile().truncation
    (result,) = parse_results(body(title=LONG, url=LONG, content=LONG, raw_content=LONG), M, rules)
    assert (result.title, result.url, result.content) == (LONG, LONG, LONG)
    assert result.raw_content == LONG[:M] and result.raw_content_cut == 6
    assert result.truncation_marker == "\n…[truncated to 10 chars]"


@pytest.mark.parametrize("length", [M - 1, M])
def test_a_body_within_the_limit_is_whole_and_has_no_marker(length: int) -> None:
    (result,) = parse_results(body(raw_content="x" * length, content="y" * length), M)
    assert result.raw_content == "x" * length and result.content == "y" * length
    assert result.raw_content_cut == 0 and result.truncation_marker == ""


@pytest.mark.parametrize(
    ("value", "expected"), [(None, None), ("", ""), (7, None), (["x"], None), ("body", "body")]
)
def test_page_body_absent_null_or_not_text_is_none_and_empty_stays_empty(
    value: Any, expected: str | None
) -> None:
    (result,) = parse_results(body(raw_content=value), M)
    assert result.raw_content == expected and result.truncation_marker == ""
    (absent,) = parse_results(body(), M)
    assert absent.raw_content is None and absent.title == absent.url == absent.content == ""


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ""),
        ("", ""),
        ("t", "t"),
        (0, "0"),
        (False, "False"),
        (7.5, "7.5"),
        ([], "[]"),
        ({"a": 1}, "{'a': 1}"),
    ],
)
def test_title_url_and_content_are_tavilys_values_as_strings(value: Any, expected: str) -> None:
    # §7: "" only when absent or null; any other value, a falsy one too, in Python's spelling.
    (result,) = parse_results(body(title=value, url=value, content=value), M)
    assert result.title == result.url == result.content == expected


def test_marker_placeholders_are_filled_once() -> None:
    rules = earlier_profile().truncation
    assert truncation_marker(rules, 8000, 12) == "\n…[truncated to 8000 chars]"
    assert truncation_marker(builtin_profile().truncation, 8000, 12) == (
        "\n[page truncated: 12 more characters not shown]"
    )


def test_untrusted_text_is_cut_by_code_points_and_kept_otherwise() -> None:
    hostile = "\x00\ud800\u2028{{max_chars}}" + "z" * 20
    (result,) = parse_results(body(title=hostile, raw_content=hostile), M, earlier_profile().truncation)
    assert result.title == hostile and result.raw_content == hostile[:M]
    # A page body that itself holds a placeholder does not change the marker.
    assert result.truncation_marker == f"\n…[truncated to {M} chars]"
