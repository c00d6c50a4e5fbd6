"""The web_search schema is pinned: exactly one argument, ``query``, required."""

from __future__ import annotations

import copy

import pytest

from oracleproto.profile import builtin_profile
from oracleproto.profile.builtin import WEB_SEARCH_TOOL_SCHEMA
from oracleproto.providers.tools import WEB_SEARCH_SCHEMA, check_web_search_schema
from tests.providers.earlier import earlier_profile


def test_schema_exposes_only_query() -> None:
    function = WEB_SEARCH_SCHEMA["function"]
    assert function["name"] == "web_search"
    assert function["parameters"]["properties"] == {
        "query": {"type": "string", "description": "The search query."}
    }
    assert function["parameters"]["required"] == ["query"]


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda s: s["function"]["parameters"]["properties"].update(end_date={"type": "string"}),
            "only 'query'",
        ),
        (lambda s: s["function"]["parameters"].update(required=[]), "exactly"),
        (lambda s: s["function"]["parameters"].update(required=["query", "end_date"]), "exactly"),
        (lambda s: s["function"].update(name="browse"), "renamed"),
    ],
)
def test_drift_is_rejected(mutate: object, message: str) -> None:
    schema = copy.deepcopy(WEB_SEARCH_SCHEMA)
    mutate(schema)  # type: ignore[operator]
    with pytest.raises(AssertionError, match=message):
        check_web_search_schema(schema)


def test_schema_is_the_builtin_profiles_and_every_fixture_profile_passes_the_pin() -> None:
    assert WEB_SEARCH_SCHEMA is WEB_SEARCH_TOOL_SCHEMA
    assert builtin_profile().llm_request.tool_schema == WEB_SEARCH_SCHEMA
    # The earlier harness's schema differs in its texts (and additionalProperties), not in its argument.
    earlier = earlier_profile().llm_request.tool_schema
    assert earlier != WEB_SEARCH_SCHEMA
    check_web_search_schema(dict(earlier))
