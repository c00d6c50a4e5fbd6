"""The earlier harness's texts, read from its profile in ../shared and filled by plain replacement.

Tests compare our output with these: the texts are never copied into the repository, and the
filling here (``str.replace`` per placeholder) is independent of the profile code's.
"""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import SHARED_EARLIER

PROFILE_PATH = SHARED_EARLIER / "earlier-harness.profile.json"


def _profile() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PROFILE_PATH.read_text(encoding="utf-8"))
    return data


PROFILE = _profile()
TEXTS: dict[str, Any] = PROFILE["texts"]
ERRORS: dict[str, Any] = PROFILE["tool_calls"]["errors"]
RETRY: str = TEXTS["injections"]["final_answer_retry"]
STRIPS_HINT: str = TEXTS["tool_error_hint_strips"]
DEFAULT_HINT: str = TEXTS["tool_error_hint_default"]


def fill(template: str, **values: object) -> str:
    """``template`` with each ``{{name}}`` of ``values`` replaced."""
    for name, value in values.items():
        template = template.replace("{{" + name + "}}", str(value))
    return template


def clause(s: int, c: int | None) -> str:
    """The search clause with s of c searches used (c None: search disabled)."""
    if c is None:
        return str(TEXTS["search_clause_disabled"])
    return fill(TEXTS["search_clause"], used=s, max_search_calls=c, searches_left=max(c - s, 0))


def injection(name: str, k: int, n: int, s: int, c: int | None, *, minimum: int = 0) -> str:
    """Injection ``name`` at step k of n with s of c searches used."""
    header = fill(
        TEXTS["status_header"],
        step=k,
        max_steps=n,
        steps_left_including_current=n - k + 1,
        search_clause=clause(s, c),
    )
    values = {"status_header": header, "step": k, "max_steps": n, "used": s, "min_search_calls": minimum}
    return fill(TEXTS["injections"][name], **values)


def tool_error(
    kind: str,
    k: int,
    n: int,
    s: int,
    c: int | None,
    *,
    strips: bool = False,
    tool_name: str = "",
    json_error: str = "",
) -> dict[str, str]:
    """The earlier harness's tool-error payload: its ``error`` and ``status`` members."""
    status = fill(
        TEXTS["tool_error_status"],
        step=k,
        max_steps=n,
        search_clause=clause(s, c),
        tool_error_hint=STRIPS_HINT if strips else DEFAULT_HINT,
    )
    message = fill(ERRORS[kind]["message"], tool_name=tool_name, json_error=json_error)
    return {"error": message, "status": status}


def tool_error_text(kind: str, k: int, n: int, s: int, c: int | None, **options: Any) -> str:
    """:func:`tool_error` serialised as the earlier harness's tool message content."""
    return json.dumps(tool_error(kind, k, n, s, c, **options), ensure_ascii=False)


def failure(detail: str) -> str:
    """The earlier harness's failed-search payload with ``detail``, serialised."""
    payload = {
        e["key"]: e["json"] if "json" in e else fill(e["text"], detail=detail)
        for e in PROFILE["tool_result"]["failure_payload"]
    }
    return json.dumps(payload, ensure_ascii=False)
