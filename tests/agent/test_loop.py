"""The ReAct loop against a scripted ChatModel and SearchTool."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta

import pytest

HEADER = "[Harness status]"


def injected(call) -> str | None:
    """The harness message appended right before this call, if any."""
    last = call.messages[-1]
    if last["role"] == "user" and last["content"].startswith(HEADER):
        return last["content"]
    return None


def path_of(kit, text: str | None) -> str | None:
    """The built-in injection whose pinned directive is the second line of ``text``."""
    if text is None:
        return None
    matches = [p for p, d in kit.directives.items() if text.split("\n")[1] == d]
    assert len(matches) == 1, text
    return matches[0]


async def test_boxed_answer_in_first_turn_ends_the_sample(kit) -> None:
    result, chat, search = await kit.run([kit.reply("Blue looks strongest. \\boxed{B}")])
    assert len(chat.calls) == 1
    assert result.parse_ok and result.final_answer_letters == ("B",) and result.correct is True
    assert result.final_answer_raw == "Blue looks strongest. \\boxed{B}"
    assert result.react_steps == 1 and result.nudges_used == 0 and result.tool_calls_count == 0
    assert result.search_calls == [] and search.calls == []
    assert result.error is None and result.finish_reason == "stop"
    assert chat.calls[0].tools == [kit.web_search]
    assert chat.calls[0].messages == [{"role": "user", "content": f"Forecast: {kit.mc_single.event}"}]


async def test_wrong_and_multi_answers(kit) -> None:
    wrong, _, _ = await kit.run([kit.reply("\\boxed{D}")])
    assert wrong.parse_ok and wrong.correct is False and wrong.final_answer_letters == ("D",)
    multi, _, _ = await kit.run([kit.reply("\\boxed{C, A}")], question=kit.mc_multi)
    assert multi.final_answer_letters == ("A", "C") and multi.correct is True
    partial, _, _ = await kit.run([kit.reply("\\boxed{A}")], question=kit.mc_multi)
    assert partial.parse_ok and partial.correct is False


async def test_a_hedge_on_a_single_answer_question_ends_wrong_under_algorithm2(kit) -> None:
    # The default parser is the paper's Algorithm 2: the letter set is the answer, no nudge.
    result, chat, _ = await kit.run([kit.reply("Blue or Red. \\boxed{A, B}"), kit.reply("\\boxed{B}")])
    assert len(chat.calls) == 1 and result.nudges_used == 0
    assert result.parse_ok and result.final_answer_letters == ("A", "B") and result.correct is False
    assert result.final_answer_raw == "Blue or Red. \\boxed{A, B}"


async def test_a_hedge_on_a_single_answer_question_is_nudged_under_strict(kit) -> None:
    script = [kit.reply("Blue or Red. \\boxed{A, B}"), kit.reply("\\boxed{B}")]
    result, chat, _ = await kit.run(script, answer_parser="strict")
    assert len(chat.calls) == 2
    assert path_of(kit, injected(chat.calls[1])) == "unboxed_continuation"
    assert result.nudges_used == 0 and result.correct is True and result.final_answer_letters == ("B",)


@pytest.mark.parametrize(("mode", "letters"), [("algorithm2", ("A", "B")), ("strict", None)])
async def test_the_bail_out_retry_parses_with_the_selected_mode(kit, mode: str, letters) -> None:
    script = [kit.reply(None), kit.reply("\\boxed{B, A}")]
    result, chat, _ = await kit.run(script, max_steps=1, final_answer_retry=True, answer_parser=mode)
    assert len(chat.calls) == 2 and result.final_answer_retry_used
    assert result.final_answer_letters == letters and result.parse_ok is (letters is not None)


async def test_search_then_answer_records_everything(kit) -> None:
    result, chat, search = await kit.run(
        [kit.search("final odds"), kit.search("team news", "injuries"), kit.reply("\\boxed{B}")]
    )
    assert [q for q, *_ in search.calls] == ["final odds", "team news", "injuries"]
    assert result.tool_calls_count == 3 and result.react_steps == 3
    assert len(result.search_calls) == 3
    assert result.search_calls[0] == {
        "query": "final odds",
        "end_date": "2025-06-14",
        "n_results": 2,
        "published_dates": ["2025-06-01", "2025-06-02", "2025-06-20"],
        "n_results_raw": 3,
        "n_results_kept": 2,
        "detector_verdicts": ["keep", "keep", "drop"],
        "detector_latency_ms": 30,
        "detector_error_kind": None,
    }
    # Tokens and latency are sums of recorded values: LLM 1001+1002+1003, search 201+202+203.
    assert (result.prompt_tokens, result.completion_tokens, result.reasoning_tokens) == (600, 60, 6)
    assert result.latency_ms == 3006 + 606
    assert result.created_at == kit.clock_start.replace(year=2025, month=7, day=1, hour=9) + timedelta(
        seconds=3
    )
    assert (result.response_id, result.system_fingerprint, result.service_tier) == (
        "resp-3",
        "fp-3",
        "default",
    )
    assert [m["step"] for m in result.step_metrics] == [0, 1, 2]
    assert result.step_metrics[1] == {
        "step": 1,
        "prompt": 200,
        "completion": 20,
        "reasoning": 2,
        "cached": None,
        "cost_usd": None,
        "latency_ms": 1002,
        "finish_reason": "tool_calls",
        "n_tool_calls": 2,
        "belief": None,
    }
    # Two tool messages answer the two calls of turn 2, in order, right after the assistant turn.
    third = chat.calls[2].messages
    assert [m["role"] for m in third] == ["user", "assistant", "tool", "assistant", "tool", "tool"]
    assert [m["tool_call_id"] for m in third[4:]] == ["call_2_0", "call_2_1"]
    payload = json.loads(third[5]["content"])
    assert payload["query"] == "injuries" and payload["answer"] is None
    assert payload["n_results"] == 2
    assert payload["results"][0] == {
        "title": "injuries — source 0",
        "url": "https://news.example/3/0",
        "published_date": "2025-06-01",
        "score": 0.87,
        "content": "Report 0 about injuries.",
        "raw_content": "Full page 0 about injuries.",
    }
    assert payload["results"][1]["raw_content"] is None and payload["results"][1]["score"] is None
    assert payload["status"] == "[Harness status] step 2/6 (4 remaining) · web_search 3/4 used (1 left)."
    assert result.messages_trace == [*third, {"role": "assistant", "content": "\\boxed{B}"}]


async def test_every_llm_call_runs_in_its_step_context(kit) -> None:
    _, chat, search = await kit.run(
        [kit.search("a"), kit.reply("thinking"), kit.search("b"), kit.reply("\\boxed{B}")]
    )
    assert [c.context.step for c in chat.calls] == [0, 1, 2, 3]
    assert {(c.context.model, c.context.question_id, c.context.sample) for c in chat.calls} == {
        ("vendor/model-x::r5::c4", "q-mc", 1)
    }
    assert {c.model for c in chat.calls} == {"vendor/model-x"}
    # Searches run on behalf of the turn that asked for them.
    assert [(ctx.model, ctx.question_id, ctx.sample, ctx.step) for *_, ctx in search.calls] == [
        ("vendor/model-x::r5::c4", "q-mc", 1, 0),
        ("vendor/model-x::r5::c4", "q-mc", 1, 2),
    ]


async def test_model_cannot_move_the_cutoff(kit) -> None:
    args = json.dumps(
        {"query": "result", "end_date": "2030-01-01", "max_results": 50, "start_date": "2025-07-01"}
    )
    _, _, search = await kit.run([kit.tools(("web_search", args)), kit.reply("\\boxed{B}")])
    assert search.calls[0][:3] == ("result", kit.cutoff, 5)


async def test_tool_errors_stay_inside_tool_messages(kit) -> None:
    turn = kit.tools(
        ("browse", '{"url": "https://x"}'),
        ("web_search", "{not json"),
        ("web_search", '["query"]'),
        ("web_search", '{"q": "x"}'),
        ("web_search", '{"query": "   "}'),
        ("web_search", '{"query": "ok"}'),
    )
    result, chat, search = await kit.run([turn, kit.reply("\\boxed{B}")])
    messages = chat.calls[1].messages
    assert [m["role"] for m in messages] == ["user", "assistant"] + ["tool"] * 6
    payloads = [json.loads(m["content"]) for m in messages[2:]]
    assert [p.get("error") for p in payloads] == [
        "unknown_tool",
        "bad_arguments",
        "bad_arguments",
        "missing_query",
        "missing_query",
        None,
    ]
    assert payloads[0]["message"] == "unknown tool 'browse'; the only tool is 'web_search'"
    assert payloads[1]["message"].startswith("arguments are not valid JSON (")
    before = "[Harness status] step 1/6 (5 remaining) · web_search 0/4 used (4 left)."
    assert all(p["status"] == before for p in payloads[:5])
    assert payloads[5]["status"] == "[Harness status] step 1/6 (5 remaining) · web_search 1/4 used (3 left)."
    assert [q for q, *_ in search.calls] == ["ok"]
    # tool_calls_count is the earlier implementation's: searches executed, not the six calls issued.
    assert result.tool_calls_count == 1 and result.nudges_used == 0


async def test_budget_exceeded_inside_a_turn_and_with_tools_kept(kit) -> None:
    result, chat, search = await kit.run(
        [kit.search("one", "two"), kit.search("three"), kit.reply("\\boxed{B}")],
        max_search_calls=1,
        budget_exceeded_drop_tools=False,
    )
    assert [q for q, *_ in search.calls] == ["one"]
    second = json.loads(chat.calls[1].messages[3]["content"])
    assert second["error"] == "search_budget_exceeded"
    assert second["status"] == "[Harness status] step 1/6 (5 remaining) · web_search 1/1 used (0 left)."
    # Drop-tools off: the schema stays and no commit notice is injected.
    assert chat.calls[1].tools == [kit.web_search] and injected(chat.calls[1]) is None
    third = json.loads(chat.calls[2].messages[-1]["content"])
    assert third["error"] == "search_budget_exceeded"
    assert result.search_calls and len(result.search_calls) == 1 and result.nudges_used == 0


async def test_budget_commit_notice_revokes_tools(kit) -> None:
    result, chat, _ = await kit.run(
        [kit.search("one"), kit.search("two"), kit.reply("\\boxed{B}")], max_search_calls=2
    )
    assert chat.calls[1].tools == [kit.web_search] and injected(chat.calls[1]) is None
    assert chat.calls[2].tools == []
    assert injected(chat.calls[2]) == (
        "[Harness status] step 3/6 (3 remaining) · web_search 2/2 used (0 left).\n"
        + kit.directives["budget_exhausted"]
    )
    assert result.nudges_used == 0 and result.correct  # an injection is no nudge


async def test_unboxed_content_gets_a_continuation(kit) -> None:
    result, chat, _ = await kit.run([kit.reply("Blue, probably."), kit.reply(None), kit.reply("\\boxed{B}")])
    assert path_of(kit, injected(chat.calls[1])) == "unboxed_continuation"
    # An empty content-only turn counts as unboxed content too.
    assert path_of(kit, injected(chat.calls[2])) == "unboxed_continuation"
    assert chat.calls[1].tools == [kit.web_search]
    assert result.nudges_used == 0 and result.correct


async def test_a_tool_turn_clears_the_unboxed_state(kit) -> None:
    result, chat, _ = await kit.run([kit.reply("Blue, probably."), kit.search("x"), kit.reply("\\boxed{B}")])
    assert path_of(kit, injected(chat.calls[1])) == "unboxed_continuation"
    assert injected(chat.calls[2]) is None and chat.calls[2].messages[-1]["role"] == "tool"
    assert result.nudges_used == 0


async def test_box_in_a_tool_call_turn_is_not_an_answer(kit) -> None:
    result, chat, _ = await kit.run([kit.search("x", content="\\boxed{A}"), kit.reply("\\boxed{B}")])
    assert len(chat.calls) == 2 and result.final_answer_letters == ("B",)


async def test_hard_cutoff_strips_tools_and_ends_invalid_at_t(kit) -> None:
    script = [kit.search("a"), kit.reply("still unsure"), kit.search("b")]
    result, chat, search = await kit.run(script, max_steps=3)
    assert len(chat.calls) == 3
    assert chat.calls[2].tools == []
    assert injected(chat.calls[2]) == (
        "[Harness status] step 3/3 (0 remaining) · web_search 1/4 used (3 left).\n"
        + kit.directives["hard_cutoff"]
    )
    # A tool call on the tool-less last step is answered with an error and never executed.
    last = json.loads(result.messages_trace[-1]["content"])
    assert last["error"] == "tools_unavailable"
    assert [q for q, *_ in search.calls] == ["a"]
    assert not result.parse_ok and result.final_answer_letters is None and result.correct is None
    assert result.react_steps == 3 and result.final_answer_raw is None and result.error is None
    assert result.final_answer_retry_used is False


async def test_unparseable_final_text_is_kept_raw(kit) -> None:
    result, _, _ = await kit.run([kit.reply("\\boxed{Z}"), kit.reply("\\boxed{maybe}")], max_steps=2)
    assert not result.parse_ok and result.final_answer_raw == "\\boxed{maybe}"


@pytest.mark.parametrize(
    ("n", "c", "lookahead", "drop"),
    list(itertools.product([1, 2, 3, 5, 6], [0, 1, 2, 4], [0, 1, 2, 3], [True, False])),
)
async def test_paths_fire_exactly_when_they_should(kit, n: int, c: int, lookahead: int, drop: bool) -> None:
    # A model that searches whenever tools are offered and otherwise writes unboxed text.
    def greedy(tools):
        return kit.search(f"q{len(tools)}") if tools else kit.reply("no box yet")

    result, chat, search = await kit.run(
        [],
        policy=greedy,
        max_steps=n,
        max_search_calls=c,
        force_final_answer_lookahead=lookahead,
        budget_exceeded_drop_tools=drop,
    )
    assert len(chat.calls) == n and not result.parse_ok
    searches, unboxed = 0, False
    for step, call in enumerate(chat.calls, start=1):
        # At most one harness message per turn: the one before it is never a header.
        before = call.messages[-2] if len(call.messages) > 1 else {"role": "none", "content": ""}
        assert not (before["role"] == "user" and before["content"].startswith(HEADER))
        got = path_of(kit, injected(call))
        if step == n:
            expected = "hard_cutoff"
        elif n - step < lookahead and searches < c:
            expected = "soft_warning"
        elif searches == c and drop:
            expected = "budget_exhausted"
        elif unboxed:
            expected = "unboxed_continuation"
        else:
            expected = None
        assert got == expected, (step, searches, unboxed)
        if expected is not None:
            header = injected(call).split("\n")[0]
            assert header == (
                f"[Harness status] step {step}/{n} ({n - step} remaining) · "
                f"web_search {searches}/{c} used ({c - searches} left)."
            )
        revoked = expected in ("hard_cutoff", "budget_exhausted")
        assert call.tools == ([] if revoked else [kit.web_search])
        if call.tools and searches < c:
            searches += 1
        unboxed = not call.tools
    assert len(search.calls) == searches == len(result.search_calls)
    assert result.nudges_used == 0  # injections fire, but only REACT_MIN_SEARCH_CALLS nudges count
