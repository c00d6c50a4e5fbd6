"""The tool-call checks of a harness profile (schema §6) and the error payloads they give.

``ToolRound`` answers one assistant turn. Every expected tool message is written out by hand: for
the earlier profile from its texts (and, where the earlier harness's captured traffic has the same
case, identical to the captured bytes), for the built-in profile today's bytes.
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from typing import Any

import pytest

from oracleproto.agent.policy import Limits
from oracleproto.agent.status import StatusTexts
from oracleproto.agent.tools import ToolRound, ToolState
from oracleproto.profile import HarnessProfile, builtin_profile, builtin_profile_data, profile_from_data
from oracleproto.providers.chat_parse import parse_chat_completion
from oracleproto.providers.types import ToolCall
from tests import earlier_texts as earlier

CUTOFF = date(2026, 3, 27)


def calls(*pairs: tuple[str, str]) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(f"call_{i}", name, args) for i, (name, args) in enumerate(pairs))


async def answer(
    profile: HarnessProfile,
    turn: tuple[ToolCall, ...],
    search: Any,
    *,
    step: int = 1,
    n: int = 6,
    c: int = 4,
    searches: int = 0,
    enabled: bool = True,
    drop: bool = True,
    offered: bool = True,
) -> list[str]:
    """The tool-message contents answering ``turn`` (call ids checked on the way)."""
    round_ = ToolRound(
        profile=profile,
        status=StatusTexts(profile.texts),
        limits=Limits(max_steps=n, max_searches=c, search_enabled=enabled, drop_tools=drop, lookahead=2),
        search=search if enabled else None,
        tools_offered=offered,
        step=step,
        end_date=CUTOFF,
        max_results=5,
        call_ids=[call.id for call in turn],
    )
    messages = await round_.answer(turn, ToolState(searches, []))
    assert [(m["role"], m["tool_call_id"]) for m in messages] == [("tool", call.id) for call in turn]
    return [m["content"] for m in messages]


def earlier_error(kind: str, k: int, s: int, c: int | None, *, strips: bool = False, **values: str) -> str:
    """The earlier harness's error payload at step k of 6 (its texts read from ../shared)."""
    return earlier.tool_error_text(kind, k, 6, s, c, strips=strips, **values)


async def test_captured_script_b_turn_is_answered_byte_for_byte(kit, earlier_profile) -> None:
    # script/b's first turn in captures/ref-script.jsonl: one search, then three calls that fail.
    turn = calls(
        ("web_search", '{"query": "first angle"}'),
        ("calculator", '{"x": 1}'),
        ("web_search", "not json"),
        ("web_search", '{"query": ""}'),
    )
    search = kit.FakeSearch()
    contents = await answer(earlier_profile, turn, search)
    assert [q for q, *_ in search.calls] == ["first angle"]
    # The counters are taken when each check fails: the search before them counts (1/4).
    assert contents[1:] == [
        earlier_error("unknown_tool", 1, 1, 4, tool_name="calculator"),
        earlier_error("bad_json", 1, 1, 4, json_error="Expecting value"),
        earlier_error("empty_query", 1, 1, 4),
    ]


async def test_captured_budget_error_uses_the_strips_hint(kit, earlier_profile) -> None:
    # script/a's step 4 in the capture: 4/4 used, D on, a search call anyway.
    search = kit.FakeSearch()
    contents = await answer(
        earlier_profile,
        calls(("web_search", '{"query": "one more"}')),
        search,
        step=4,
        searches=4,
        offered=False,
    )
    assert contents == [earlier_error("budget_exceeded", 4, 4, 4, strips=True)]
    assert search.calls == []


@pytest.mark.parametrize(
    ("arguments", "kind", "json_error"),
    [
        ('{"q": "x"}', "missing_query", ""),
        ('{"query": null}', "missing_query", ""),
        ('{"query": 5}', "query_not_string", ""),
        ('{"query": ["a"]}', "query_not_string", ""),
        ('{"query": " \\t "}', "empty_query", ""),
        ('["query"]', "not_object", ""),
        ('"text"', "not_object", ""),
        ("{not json", "bad_json", "Expecting property name enclosed in double quotes"),
        # No blank_arguments_are_empty: blank arguments are parsed, and fail as JSON.
        ("   ", "bad_json", "Expecting value"),
        # "" becomes {}: the query is then missing.
        ("", "missing_query", ""),
        # Longer than Python converts: its json raises ValueError, not JSONDecodeError.
        (
            '{"query": 1' + "0" * 5000 + "}",
            "bad_json",
            "Exceeds the limit (4300 digits) for integer string conversion: value has 5001 digits; "
            "use sys.set_int_max_str_digits() to increase the limit",
        ),
    ],
)
async def test_earlier_argument_errors(
    kit, earlier_profile, arguments: str, kind: str, json_error: str
) -> None:
    contents = await answer(earlier_profile, calls(("web_search", arguments)), kit.FakeSearch(), step=2)
    assert contents == [earlier_error(kind, 2, 0, 4, json_error=json_error)]


@pytest.mark.parametrize(
    ("arguments", "code", "message"),
    [
        ('{"q": "x"}', "missing_query", 'a non-empty string \\"query\\" argument is required'),
        ('{"query": 5}', "missing_query", 'a non-empty string \\"query\\" argument is required'),
        ('{"query": " "}', "missing_query", 'a non-empty string \\"query\\" argument is required'),
        # blank_arguments_are_empty: blank arguments are {}, so the query is missing, not bad JSON.
        ("   ", "missing_query", 'a non-empty string \\"query\\" argument is required'),
        ('["query"]', "bad_arguments", 'arguments must be a JSON object such as {\\"query\\": \\"...\\"}'),
        (
            "{not json",
            "bad_arguments",
            "arguments are not valid JSON (Expecting property name enclosed in double quotes); "
            'send {\\"query\\": \\"...\\"}',
        ),
    ],
)
async def test_builtin_argument_errors(kit, arguments: str, code: str, message: str) -> None:
    contents = await answer(builtin_profile(), calls(("web_search", arguments)), kit.FakeSearch(), step=2)
    status = "[Harness status] step 2/6 (4 remaining) · web_search 0/4 used (4 left)."
    assert contents == [f'{{"error": "{code}", "message": "{message}", "status": "{status}"}}']


async def test_checks_run_in_profile_order(kit, earlier_profile) -> None:
    # Budget spent (4/4): the unknown tool is named first, then the budget beats bad arguments.
    turn = calls(("calculator", "not json"), ("web_search", "not json"), ("web_search", '{"query": "ok"}'))
    search = kit.FakeSearch()
    earlier = await answer(earlier_profile, turn, search, step=3, searches=4)
    assert earlier == [
        earlier_error("unknown_tool", 3, 4, 4, strips=True, tool_name="calculator"),
        earlier_error("budget_exceeded", 3, 4, 4, strips=True),
        earlier_error("budget_exceeded", 3, 4, 4, strips=True),
    ]
    builtin = [json.loads(c) for c in await answer(builtin_profile(), turn, search, step=3, searches=4)]
    assert [(p["error"], p["message"]) for p in builtin] == [
        ("unknown_tool", "unknown tool 'calculator'; the only tool is 'web_search'"),
        (
            "search_budget_exceeded",
            "all 4 searches are used; no search was made. Answer with \\boxed{...}",
        ),
        (
            "search_budget_exceeded",
            "all 4 searches are used; no search was made. Answer with \\boxed{...}",
        ),
    ]
    assert search.calls == []


async def test_tools_unavailable_is_a_builtin_check_only(kit, earlier_profile) -> None:
    # A step that offered no tools: the built-in profile refuses the call, the earlier profile has
    # no such check and runs the search (s < C).
    turn = calls(("web_search", '{"query": "late"}'))
    builtin_search, earlier_search = kit.FakeSearch(), kit.FakeSearch()
    builtin = await answer(builtin_profile(), turn, builtin_search, step=6, offered=False)
    assert builtin == [
        '{"error": "tools_unavailable", "message": "tools are disabled on this step; no search was made. '
        'Answer with \\\\boxed{...}", '
        '"status": "[Harness status] step 6/6 (0 remaining) · web_search 0/4 used (4 left)."}'
    ]
    assert builtin_search.calls == []
    earlier = json.loads((await answer(earlier_profile, turn, earlier_search, step=6, offered=False))[0])
    assert [q for q, *_ in earlier_search.calls] == ["late"] and len(earlier["results"]) == 2


async def test_the_hint_strips_at_the_last_step(kit, earlier_profile) -> None:
    contents = await answer(earlier_profile, calls(("browse", "{}")), kit.FakeSearch(), step=6, searches=1)
    assert contents == [earlier_error("unknown_tool", 6, 1, 4, strips=True, tool_name="browse")]
    # k = N − 1 with budget left and D: the default hint.
    contents = await answer(earlier_profile, calls(("browse", "{}")), kit.FakeSearch(), step=5, searches=3)
    assert contents == [earlier_error("unknown_tool", 5, 3, 4, tool_name="browse")]
    # D off: a spent budget does not strip, so the default hint.
    contents = await answer(
        earlier_profile, calls(("browse", "{}")), kit.FakeSearch(), step=2, searches=4, drop=False
    )
    assert contents == [earlier_error("unknown_tool", 2, 4, 4, tool_name="browse")]


async def test_a_search_in_the_same_turn_moves_the_hint_to_strips(kit, earlier_profile) -> None:
    # 3/4 before the turn; the first call spends the last search, so D and s ≥ C hold for the
    # second call's error.
    turn = calls(("web_search", '{"query": "last"}'), ("nope", "{}"))
    contents = await answer(earlier_profile, turn, kit.FakeSearch(), step=2, searches=3)
    assert contents[1] == earlier_error("unknown_tool", 2, 4, 4, strips=True, tool_name="nope")


async def test_query_whitespace_keep_and_strip(kit, earlier_profile) -> None:
    turn = calls(("web_search", '{"query": "  padded query  "}'))
    kept, stripped = kit.FakeSearch(), kit.FakeSearch()
    await answer(earlier_profile, turn, kept)
    await answer(builtin_profile(), turn, stripped)
    assert [q for q, *_ in kept.calls] == ["  padded query  "]
    assert [q for q, *_ in stripped.calls] == ["padded query"]


async def test_without_search_the_budget_check_refuses_with_the_disabled_clause(kit, earlier_profile) -> None:
    # E false and C = 0 (how the runner runs a no-search cell): budget_exceeded fails at s ≥ 0, and
    # D with s ≥ C picks the strips hint; the clause is search_clause_disabled.
    contents = await answer(
        earlier_profile, calls(("web_search", '{"query": "x"}')), kit.FakeSearch(), n=3, c=0, enabled=False
    )
    assert contents == [earlier.tool_error_text("budget_exceeded", 1, 3, 0, None, strips=True)]
    builtin = json.loads(
        (
            await answer(
                builtin_profile(),
                calls(("web_search", '{"query": "x"}')),
                kit.FakeSearch(),
                n=3,
                enabled=False,
            )
        )[0]
    )
    assert builtin["message"] == "unknown tool 'web_search'; no tools are available in this run"


def _custom(**errors: dict[str, Any]) -> HarnessProfile:
    data = builtin_profile_data()
    data["name"] = "custom"
    data["tool_calls"]["errors"].update(errors)
    return profile_from_data(data, source="a test profile")


async def test_a_null_code_leaves_its_member_out_and_every_message_may_name_the_tool(kit) -> None:
    profile = _custom(
        budget_exceeded={
            "code": None,
            "message": "{{tool_name}}: no search left after {{used}}/{{max_search_calls}}",
        },
        empty_query={"code": "empty", "message": "{{tool_name}} needs a query (step {{step}})"},
    )
    turn = calls(("web_search", '{"query": ""}'))
    contents = await answer(profile, turn, kit.FakeSearch(), step=2, searches=0)
    status = "[Harness status] step 2/6 (4 remaining) · web_search 0/4 used (4 left)."
    assert contents == [
        f'{{"error": "empty", "message": "\'web_search\' needs a query (step 2)", "status": "{status}"}}'
    ]
    contents = await answer(profile, turn, kit.FakeSearch(), step=2, searches=4)
    status = "[Harness status] step 2/6 (4 remaining) · web_search 4/4 used (0 left)."
    # {{code}} is null for budget_exceeded: the "error" member is left out, the others stay in order.
    assert contents == [f'{{"message": "\'web_search\': no search left after 4/4", "status": "{status}"}}']


async def test_earlier_compares_with_the_configured_cap_even_without_search(kit, earlier_profile) -> None:
    # E false with C = 4 (a harness with a search switch): C_shown = 0 in the texts, but the
    # budget check and the strips hint read C. 0 < 4: bad arguments are named, and the hint is the
    # default one although 0 ≥ C_shown.
    turn = calls(("web_search", "not json"), ("browse", "{}"))
    contents = await answer(earlier_profile, turn, kit.FakeSearch(), step=2, enabled=False)
    assert contents == [
        earlier_error("bad_json", 2, 0, None, json_error="Expecting value"),
        earlier_error("unknown_tool", 2, 0, None, tool_name="browse"),
    ]


async def test_a_non_string_id_is_answered_as_the_provider_sent_it(kit) -> None:
    # harness-profile.md §2 replaces only a missing or empty id; the tool message carries the call's id.
    turn = (ToolCall(7, "web_search", '{"query": "q"}', raw_id=7),)
    contents = await answer(builtin_profile(), turn, kit.FakeSearch(), step=2)  # tool_call_id 7, not "7"
    assert len(contents) == 1


async def test_custom_tool_calls_get_a_tool_message_each(kit, earlier_profile) -> None:
    # §6: every call of a reply is answered; a custom call is checked by its name and its input.
    body = {
        "id": "chatcmpl-1",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": "c1", "type": "custom", "custom": {"name": "grammar", "input": "free text"}},
                        {
                            "id": "c2",
                            "type": "custom",
                            "custom": {"name": "web_search", "input": '{"query": "q"}'},
                        },
                        {"id": "c3", "type": "custom", "custom": {"name": "web_search", "input": "not json"}},
                    ],
                },
            }
        ],
    }
    turn = parse_chat_completion(json.dumps(body), latency_ms=1, received_at=datetime(2026, 1, 1, tzinfo=UTC))
    search = kit.FakeSearch()
    contents = await answer(earlier_profile, turn.tool_calls, search)
    assert [q for q, *_ in search.calls] == ["q"]
    assert contents[0] == earlier_error("unknown_tool", 1, 0, 4, tool_name="grammar")
    assert contents[2] == earlier_error("bad_json", 1, 1, 4, json_error="Expecting value")
