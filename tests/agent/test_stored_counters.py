"""The counters the paper leaves undefined, stored as the earlier implementation stores them.

Its analysis averages them per model (``avg_tool_calls``, ``avg_nudges_used``), so our runs must
carry the same meaning for the two codes to report the same averages (docs/design/architecture.md, Agent).
"""

from __future__ import annotations

import json


async def test_tool_calls_count_is_the_searches_executed_failed_ones_included(kit) -> None:
    search = kit.FakeSearch(fail={"down": "network"})
    turn = kit.tools(
        ("web_search", json.dumps({"query": "up"})),
        ("web_search", json.dumps({"query": "down"})),
        ("browse", "{}"),
        ("web_search", "{not json"),
    )
    result, _, _ = await kit.run([turn, kit.reply("\\boxed{B}")], search=search)
    # Four calls issued: two searches executed (the failed one made an external call and is in
    # search_calls), two refused before any call (unknown tool, bad arguments).
    assert [c["query"] for c in result.search_calls] == ["up", "down"]
    assert result.search_calls[1]["error_kind"] == "network"
    assert result.tool_calls_count == 2
    assert result.step_metrics[0]["n_tool_calls"] == 4  # the per-turn record keeps every call issued


async def test_injections_and_the_retry_are_no_nudges(kit) -> None:
    script = [kit.reply("thinking"), kit.reply(""), kit.reply("\\boxed{B}")]
    result, chat, _ = await kit.run(script, max_steps=2, final_answer_retry=True)
    harness_messages = [call.messages[-1]["content"] for call in chat.calls]
    assert all(text.startswith("[Harness status]") for text in harness_messages)  # three injections
    assert result.final_answer_retry_used and result.react_steps == 3
    assert result.nudges_used == 0


async def test_with_the_belief_protocol_off_belief_parse_ok_is_null(kit) -> None:
    # The paper: left NULL when the block is not requested (the earlier code writes 0; its
    # analysis counts only belief_parse_ok == 1, so both read the same).
    result, _, _ = await kit.run([kit.reply("\\boxed{B}")])
    assert result.belief_parse_ok is None and result.belief_final is None and result.belief_trace is None
