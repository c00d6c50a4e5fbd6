"""Golden snapshots of full message traces and stored columns for scripted scenarios.

Every value is fixed by the scripts (recorded times, latencies, tokens), so nothing is masked.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
from syrupy.assertion import SnapshotAssertion


def scenario(kit, name: str):
    """Script and ReactSettings overrides of each scenario."""
    if name == "search_then_answer":
        return [
            kit.search("final odds"),
            kit.search("team news", "injuries"),
            kit.reply("Blue. \\boxed{B}"),
        ], {}
    if name == "budget_commit":
        script = [
            kit.search("final odds"),
            kit.search("team news"),
            kit.reply("Evidence favours Blue."),
            kit.reply("\\boxed{B}"),
        ]
        return script, {"max_search_calls": 2}
    if name == "hard_cutoff_invalid":
        return [kit.search("a"), kit.reply("Unclear."), kit.reply("I would say Blue.")], {"max_steps": 3}
    if name == "tool_errors_and_continuation":
        script = [
            kit.tools(
                ("browse", '{"url": "https://x"}'), ("web_search", "{oops"), ("web_search", '{"query": ""}')
            ),
            kit.reply("Probably Gold."),
            kit.reply("\\boxed{D}"),
        ]
        return script, {}
    if name == "final_answer_retry":
        return [kit.reply("Thinking."), kit.reply(None, finish="length"), kit.reply("\\boxed{B}")], {
            "max_steps": 2,
            "final_answer_retry": True,
        }
    raise AssertionError(name)


@pytest.mark.parametrize(
    "name",
    [
        "search_then_answer",
        "budget_commit",
        "hard_cutoff_invalid",
        "tool_errors_and_continuation",
        "final_answer_retry",
    ],
)
async def test_scenario_trace(kit, snapshot: SnapshotAssertion, name: str) -> None:
    script, react = scenario(kit, name)
    result, chat, _ = await kit.run(script, **react)
    stored = asdict(result)
    stored["created_at"] = result.created_at.isoformat()
    # The trace is what the last call saw plus the final assistant turn: check before snapshotting.
    assert result.messages_trace[: len(chat.calls[-1].messages)] == chat.calls[-1].messages
    assert json.dumps(stored, ensure_ascii=False, indent=1) == snapshot
