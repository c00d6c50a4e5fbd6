"""Failures, the bail-out retry, belief columns, trace switch and bad configuration."""

from __future__ import annotations

import json

import pytest

from oracleproto.agent.result import SampleResult
from oracleproto.errors import AuthError, CallFailedError, ConfigError, ErrorKind


async def test_call_failure_is_recorded_as_its_kind(kit) -> None:
    failure = CallFailedError(ErrorKind.SERVER_5XX, "503 after 5 retries", status_code=503)
    result, chat, _ = await kit.run([kit.search("a"), failure])
    assert len(chat.calls) == 2
    # The error row's columns keep run-layout.md's shape; the JSON cells keep what was billed
    # before the failure (the first turn and its search), for the cost (docs/design/metrics.md, Cost).
    empty = SampleResult.empty(error="server_5xx", created_at=kit.search_response_time(1))
    assert {**vars(result), "step_metrics": None, "search_calls": None} == vars(empty)
    assert [s["step"] for s in result.step_metrics] == [0]
    assert [c["query"] for c in result.search_calls] == ["a"]


async def test_first_call_failure_uses_the_clock(kit) -> None:
    result, _, _ = await kit.run([CallFailedError(ErrorKind.CONTENT_POLICY, "refused")])
    assert result.error == "content_policy" and result.created_at == kit.clock_start
    assert not result.parse_ok and result.messages_trace is None and result.step_metrics is None


async def test_search_raising_a_call_failure_is_the_sample_error(kit) -> None:
    search = kit.FakeSearch(raise_={"a": CallFailedError(ErrorKind.NETWORK, "connection reset")})
    result, _, _ = await kit.run([kit.search("a")], search=search)
    assert result.error == "network"


async def test_auth_error_propagates_from_chat_and_search(kit) -> None:
    with pytest.raises(AuthError, match="401"):
        await kit.run([kit.search("a"), AuthError("401 invalid key", status_code=401)])
    search = kit.FakeSearch(raise_={"a": AuthError("403 key revoked", status_code=403)})
    with pytest.raises(AuthError, match="403"):
        await kit.run([kit.search("a")], search=search)


async def test_failed_search_is_an_error_payload_and_counts(kit) -> None:
    search = kit.FakeSearch(fail={"down": "server_5xx"})
    result, chat, _ = await kit.run([kit.search("down"), kit.reply("\\boxed{B}")], search=search)
    payload = json.loads(chat.calls[1].messages[-1]["content"])
    assert payload == {
        "error": "search_failed",
        "kind": "server_5xx",
        "message": "the search failed (server_5xx); it counts against the budget",
        "status": "[Harness status] step 1/6 (5 remaining) · web_search 1/4 used (3 left).",
    }
    assert result.search_calls == [
        {
            "query": "down",
            "end_date": "2025-06-14",
            "n_results": 0,
            "published_dates": [],
            "error_kind": "server_5xx",
        }
    ]
    assert result.latency_ms == 1001 + 41 + 1002


async def test_cleared_answer_and_kept_answer_reach_the_model(kit) -> None:
    search = kit.FakeSearch(answer="Blue won the semi-final.")
    _, chat, _ = await kit.run([kit.search("a"), kit.reply("\\boxed{B}")], search=search)
    assert json.loads(chat.calls[1].messages[-1]["content"])["answer"] == "Blue won the semi-final."


async def test_trace_off_keeps_every_other_column(kit) -> None:
    on, _, _ = await kit.run([kit.search("a"), kit.reply("\\boxed{B}")])
    fresh = type(kit)()
    off, _, _ = await fresh.run([fresh.search("a"), fresh.reply("\\boxed{B}")], write_trace=False)
    assert off.messages_trace is None and on.messages_trace is not None
    assert {**vars(off), "messages_trace": None} == {**vars(on), "messages_trace": None}


async def test_final_answer_retry_fires_on_empty_final_turn(kit) -> None:
    script = [kit.reply("thinking"), kit.reply(""), kit.reply("\\boxed{B}")]
    result, chat, _ = await kit.run(script, max_steps=2, final_answer_retry=True)
    assert len(chat.calls) == 3
    retry = chat.calls[2]
    assert retry.tools == [] and retry.context.step == 2
    assert retry.messages[-1]["content"] == (
        "[Harness status] step 2/2 (0 remaining) · web_search 0/4 used (4 left).\n" + kit.retry_directive
    )
    assert result.final_answer_retry_used and result.correct and result.react_steps == 3
    # Soft warning at step 1 (N − 1 < LOOKAHEAD), hard cutoff at step 2, then the retry message:
    # none is a nudge (the earlier implementation counts only REACT_MIN_SEARCH_CALLS nudges).
    assert result.nudges_used == 0


async def test_final_answer_retry_is_off_by_default_and_skips_nonempty_text(kit) -> None:
    off, chat, _ = await kit.run([kit.reply("thinking"), kit.reply("")], max_steps=2)
    assert len(chat.calls) == 2 and not off.final_answer_retry_used and not off.parse_ok
    kept, chat2, _ = await type(kit)().run(
        [kit.reply("thinking"), kit.reply("I cannot tell.")], max_steps=2, final_answer_retry=True
    )
    assert (
        len(chat2.calls) == 2
        and not kept.final_answer_retry_used
        and kept.final_answer_raw == "I cannot tell."
    )


async def test_belief_columns(kit) -> None:
    belief = '<belief>{"A": 0.1, "B": 0.7, "C": 0.1, "D": 0.1}</belief>'
    result, _, _ = await kit.run([kit.reply("first look"), kit.reply(f"{belief} \\boxed{{B}}")], belief=True)
    assert result.belief_final == {"A": 0.1, "B": 0.7, "C": 0.1, "D": 0.1}
    assert result.belief_parse_ok is True
    assert result.belief_trace == [{"step": 0, "belief": None}, {"step": 1, "belief": result.belief_final}]
    assert result.step_metrics[1]["belief"] == result.belief_final
    bad, _, _ = await type(kit)().run([kit.reply('<belief>{"A": 0.9}</belief> \\boxed{B}')], belief=True)
    assert bad.belief_parse_ok is False and bad.belief_final is None and bad.parse_ok
    off, _, _ = await type(kit)().run([kit.reply(f"{belief} \\boxed{{B}}")])
    assert (off.belief_final, off.belief_trace, off.belief_parse_ok) == (None, None, None)
    assert off.step_metrics[0]["belief"] is None


async def test_no_search_mode_offers_no_tools(kit) -> None:
    result, chat, _ = await kit.run(
        [kit.tools(("web_search", '{"query": "x"}')), kit.reply("hmm"), kit.reply("\\boxed{B}")],
        no_search=True,
        max_steps=3,
    )
    assert [c.tools for c in chat.calls] == [[], [], []]
    payload = json.loads(chat.calls[1].messages[-1]["content"])
    assert payload == {
        "error": "unknown_tool",
        "message": "unknown tool 'web_search'; no tools are available in this run",
        "status": "[Harness status] step 1/3 (2 remaining) · web_search 0/0 used (0 left).",
    }
    # No commit notice without a tool to revoke; the last step is still the hard cutoff.
    assert chat.calls[1].messages[-1]["role"] == "tool"
    assert (
        chat.calls[2]
        .messages[-1]["content"]
        .startswith(
            "[Harness status] step 3/3 (0 remaining) · web_search 0/0 used (0 left).\nThis is the final step"
        )
    )
    assert result.correct and result.search_calls == []


async def test_search_tool_without_schema_is_no_search(kit) -> None:
    result, chat, search = await kit.run(
        [kit.tools(("web_search", '{"query": "x"}')), kit.reply("\\boxed{B}")], tools=[], max_steps=3
    )
    assert search.calls == [] and chat.calls[1].tools == []
    assert json.loads(chat.calls[1].messages[-1]["content"])["error"] == "unknown_tool"
    assert result.correct


async def test_bad_configuration_is_refused(kit) -> None:
    other = {"type": "function", "function": {"name": "browse", "parameters": {}}}
    with pytest.raises(
        ConfigError, match=r"agent tools\[0\]: expected a function schema named 'web_search', got 'browse'"
    ):
        await kit.run([], tools=[other])
    with pytest.raises(
        ConfigError, match=r"agent tools\[1\]: expected a function schema named 'web_search', got None"
    ):
        await kit.run([], tools=[kit.web_search, "web_search"])
    with pytest.raises(ConfigError, match="no SearchTool was given"):
        await kit.run([], no_search=True, tools=[kit.web_search])
    with pytest.raises(
        ConfigError,
        match=r"REACT_MIN_SEARCH_CALLS=2: the harness profile 'oracleproto' uses the 'oracleproto' "
        r"injection policy, which has no nudges",
    ):
        await kit.run([], min_search_calls=2)
