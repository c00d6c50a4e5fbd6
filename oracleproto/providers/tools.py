"""The only tool the model ever sees: ``web_search(query: string)``.

The cutoff date is held by the harness and sent to Tavily as ``end_date``; no argument the
model controls may reach the search call, so the schema is pinned at import time (paper
App. B.3): adding e.g. an ``end_date`` property would break the information barrier.
"""

from __future__ import annotations

from typing import Any, Final

from oracleproto.profile.builtin import WEB_SEARCH_TOOL_SCHEMA

WEB_SEARCH_TOOL_NAME: Final = "web_search"

#: The built-in harness profile's tool schema (its single source is ``profile/builtin.py``).
WEB_SEARCH_SCHEMA: Final[dict[str, Any]] = WEB_SEARCH_TOOL_SCHEMA


def check_web_search_schema(schema: dict[str, Any]) -> None:
    """Raise ``AssertionError`` unless ``schema`` exposes exactly ``query`` as its only, required argument."""
    function = schema["function"]
    parameters = function["parameters"]
    if function["name"] != WEB_SEARCH_TOOL_NAME:
        raise AssertionError(f"web_search schema renamed to {function['name']!r}")
    if set(parameters["properties"]) != {"query"}:
        raise AssertionError(f"web_search must expose only 'query', got {sorted(parameters['properties'])}")
    if list(parameters["required"]) != ["query"]:
        raise AssertionError(f"web_search must require exactly ['query'], got {parameters['required']}")


# Import-time pin: a drifted schema makes the package fail to import, before any test or run.
check_web_search_schema(WEB_SEARCH_SCHEMA)
