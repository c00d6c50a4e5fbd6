"""The ReAct loop under the earlier harness's profile (``earlier`` policy, schema §5) with scripted fakes.

The injected texts are written out here as the earlier harness sent them (the same bytes appear
in its captured traffic, captures/ref-script.jsonl), so each test pins which rule fired, with
which counters, and what the model was offered.
"""

from __future__ import annotations

import json

import pytest

from oracleproto.errors import ConfigError
from tests import earlier_texts as earlier

RETRY = earlier.RETRY


def text(name: str, k: int, n: int, s: int, c: int | None, *, minimum: int = 0) -> str:
    """Injection ``name`` at step k of n with s of c searches used (c None: search disabled)."""
    return earlier.injection(name, k, n, s, c, minimum=minimum)


def tool_error(
    kind: str, k: int, n: int, s: int, c: int, *, strips: bool, tool_name: str = ""
) -> dict[str, str]:
    return earlier.tool_error(kind, k, n, s, c, strips=strips, tool_name=tool_name)


def before(call) -> str | None:
    """The user message the harness put right before this call (None: the last message is no user's)."""
    last = call.messages[-1]
    return last["content"] if last["role"] == "user" and len(call.messages) > 1 else None


async def test_budget_notice_once_then_continuations_and_a_strips_hint(kit, earlier_profile) -> None:
    # script/a of the captures, with C = 1: the notice fires once, the tools stay away from then on.
    script = [
        kit.search("a"),
        kit.reply("thinking"),
        kit.reply("hmm"),
        kit.search("b"),
        kit.reply("almost"),
        kit.reply("\\boxed{B}"),
    ]
    result, chat, search = await kit.run(script, profile=earlier_profile, max_search_calls=1)
    assert [before(c) for c in chat.calls] == [
        None,
        text("budget_exhausted", 2, 6, 1, 1),
        text("unboxed_continuation", 3, 6, 1, 1),
        text("unboxed_continuation", 4, 6, 1, 1),
        # After a tool turn nothing is pending; k = 5 is inside the window with s ≥ C_shown.
        text("soft_warning_no_search", 5, 6, 1, 1),
        text("hard_cutoff", 6, 6, 1, 1),
    ]
    assert [c.tools for c in chat.calls] == [[kit.web_search]] + [[]] * 5
    # The search the model asked for at step 4 (tools revoked) is refused with the strips hint.
    error = chat.calls[4].messages[-2]
    assert error == {
        "role": "tool",
        "tool_call_id": "call_4_0",
        "content": json.dumps(tool_error("budget_exceeded", 4, 6, 1, 1, strips=True), ensure_ascii=False),
    }
    assert [q for q, *_ in search.calls] == ["a"]
    assert result.correct and result.nudges_used == 0 and result.react_steps == 6


async def test_search_payload_and_status_free_results(kit, earlier_profile) -> None:
    _, chat, _ = await kit.run([kit.search("odds"), kit.reply("\\boxed{B}")], profile=earlier_profile)
    # The earlier payload: results then answer (absent: Tavily sent none), no query, count or status;
    # absent fields left out, a float score as Tavily sent it.
    assert chat.calls[1].messages[-1]["content"] == (
        '{"results": [{"title": "odds — source 0", "url": "https://news.example/1/0", '
        '"content": "Report 0 about odds.", "published_date": "2025-06-01", "score": 0.87, '
        '"raw_content": "Full page 0 about odds."}, {"title": "odds — source 1", '
        '"url": "https://news.example/1/1", "content": "Report 1 about odds.", '
        '"published_date": "2025-06-02"}]}'
    )


async def test_tool_error_at_the_last_step_without_lookahead(kit, earlier_profile) -> None:
    # L = 0: no forced finalisation, so step N offers tools; an error there uses the strips hint.
    script = [kit.reply("thinking"), kit.tools(("calculator", "{}"))]
    result, chat, _ = await kit.run(
        script, profile=earlier_profile, max_steps=2, force_final_answer_lookahead=0
    )
    assert [c.tools for c in chat.calls] == [[kit.web_search], [kit.web_search]]
    assert before(chat.calls[1]) == text("unboxed_continuation", 2, 2, 0, 4)
    assert json.loads(result.messages_trace[-1]["content"]) == tool_error(
        "unknown_tool", 2, 2, 0, 4, strips=True, tool_name="calculator"
    )
    assert not result.parse_ok and not result.final_answer_retry_used


async def test_nudges_hold_back_answers_until_enough_searches(kit, earlier_profile) -> None:
    script = [kit.reply("\\boxed{B}"), kit.search("a"), kit.reply("\\boxed{B}"), kit.reply("\\boxed{A}")]
    result, chat, _ = await kit.run(script, profile=earlier_profile, min_search_calls=2, max_nudges=2)
    assert len(chat.calls) == 4
    # Each nudge follows the reply it answers; no continuation follows a nudged reply.
    assert before(chat.calls[1]) == text("nudge", 1, 6, 0, 4, minimum=2)
    assert chat.calls[1].messages[-2] == {"role": "assistant", "content": "\\boxed{B}"}
    assert chat.calls[2].messages[-1]["role"] == "tool"
    assert before(chat.calls[3]) == text("nudge", 3, 6, 1, 4, minimum=2)
    # MAXN = 2 reached: the fourth reply is read although only 1 < MIN search was made.
    assert result.nudges_used == 2 and result.final_answer_letters == ("A",) and not result.correct
    assert result.final_answer_raw == "\\boxed{A}"


async def test_no_nudge_at_the_last_step_and_no_continuation_after_one(kit, earlier_profile) -> None:
    script = [kit.reply("no box"), kit.reply("still none"), kit.reply("\\boxed{B}")]
    result, chat, _ = await kit.run(
        script,
        profile=earlier_profile,
        max_steps=3,
        force_final_answer_lookahead=0,
        min_search_calls=2,
        max_nudges=5,
    )
    assert [before(c) for c in chat.calls] == [
        None,
        text("nudge", 1, 3, 0, 4, minimum=2),
        text("nudge", 2, 3, 0, 4, minimum=2),
    ]
    # Step 3 = N: no nudge, the reply is read.
    assert result.nudges_used == 2 and result.correct and result.react_steps == 3


async def test_failed_searches_count_for_the_minimum(kit, earlier_profile) -> None:
    search = kit.FakeSearch(fail={"down": "server_5xx"})
    script = [kit.search("down"), kit.reply("\\boxed{B}")]
    result, chat, _ = await kit.run(script, profile=earlier_profile, search=search, min_search_calls=1)
    assert len(chat.calls) == 2 and result.nudges_used == 0 and result.correct
    # The failure payload: Tavily's error and the harness's description (none from this fake).
    assert chat.calls[1].messages[-1]["content"] == earlier.failure("")


async def test_without_search_nothing_nudges_and_the_clause_says_disabled(kit, earlier_profile) -> None:
    # A no-search cell (C = 0): D with s ≥ C fires the notice at once, then the window's warnings.
    script = [kit.reply("thinking"), kit.reply("hmm"), kit.reply("\\boxed{B}")]
    result, chat, _ = await kit.run(
        script, profile=earlier_profile, no_search=True, max_steps=3, max_search_calls=0, min_search_calls=2
    )
    assert [before(c) for c in chat.calls] == [
        text("budget_exhausted", 1, 3, 0, None),
        text("soft_warning_no_search", 2, 3, 0, None),
        text("hard_cutoff", 3, 3, 0, None),
    ]
    assert [c.tools for c in chat.calls] == [[], [], []]
    assert result.nudges_used == 0 and result.correct


async def test_a_sample_that_cannot_search_needs_a_refusing_check(kit, earlier_profile) -> None:
    # C = 4 without a search tool: the earlier profile's checks would let a web_search call through.
    with pytest.raises(
        ConfigError,
        match=r"the harness profile 'earlier-harness' cannot refuse a 'web_search' call in a sample without "
        r"search: tool_calls\.checks has no 'search_disabled', and its 'budget_exceeded' cap is 4, not 0",
    ):
        await kit.run([kit.reply("\\boxed{B}")], profile=earlier_profile, no_search=True)


@pytest.mark.parametrize(
    ("script", "earlier_retries", "oracleproto_retries"),
    [
        # The latest content-only reply is empty: both retry.
        (["thinking", ""], True, True),
        # A later tool-call turn without content: only the oracleproto rule reads it.
        (["thinking", "TOOL"], False, True),
        (["", "TOOL"], True, True),
        # Whitespace is not empty for the earlier rule; it is blank for oracleproto's.
        (["thinking", "  "], False, True),
        (["", "I cannot tell."], False, False),
        (["TOOL", "TOOL"], True, True),
    ],
)
async def test_final_answer_retry_rules(
    kit, earlier_profile, script: list[str], earlier_retries: bool, oracleproto_retries: bool
) -> None:
    def turns(k):
        return [k.search(f"q{i}") if s == "TOOL" else k.reply(s) for i, s in enumerate(script)] + [
            k.reply("\\boxed{B}")
        ]

    earlier, chat, _ = await kit.run(
        turns(kit), profile=earlier_profile, max_steps=2, final_answer_retry=True
    )
    assert earlier.final_answer_retry_used is earlier_retries and len(chat.calls) == 2 + earlier_retries
    if earlier_retries:
        retry = chat.calls[2]
        assert retry.messages[-1] == {"role": "user", "content": RETRY}
        assert retry.tools == [] and retry.context.step == 2
        assert earlier.correct and earlier.react_steps == 3
    fresh = type(kit)()
    ours, chat2, _ = await fresh.run(turns(fresh), max_steps=2, final_answer_retry=True)
    assert ours.final_answer_retry_used is oracleproto_retries and len(chat2.calls) == 2 + oracleproto_retries


async def test_a_nudged_empty_reply_does_not_count_for_the_retry_but_is_no_answer_either(
    kit, earlier_profile
) -> None:
    # Step 1's empty reply is nudged (not read); step 2 searches. No content-only reply was read,
    # so the content is "" and the retry fires.
    script = [kit.reply(""), kit.search("x"), kit.reply("\\boxed{B}")]
    result, chat, _ = await kit.run(
        script,
        profile=earlier_profile,
        max_steps=2,
        force_final_answer_lookahead=0,
        min_search_calls=1,
        final_answer_retry=True,
    )
    assert result.nudges_used == 1 and result.final_answer_retry_used and result.correct
    assert len(chat.calls) == 3 and chat.calls[2].messages[-1]["content"] == RETRY


@pytest.mark.parametrize(("policy", "answered"), [("earlier", True), ("oracleproto", False)])
async def test_a_retry_reply_with_tool_calls_is_read_only_under_the_earlier_policy(
    kit, earlier_profile, policy: str, answered: bool
) -> None:
    """The earlier harness read the retry reply's content whatever tool calls it also held."""
    script = [kit.reply("thinking"), kit.reply(""), kit.search("late", content="\\boxed{B}")]
    profile = earlier_profile if policy == "earlier" else None
    result, chat, _ = await kit.run(script, profile=profile, max_steps=2, final_answer_retry=True)
    assert result.final_answer_retry_used and len(chat.calls) == 3
    assert result.parse_ok is answered and (result.correct is True) is answered
