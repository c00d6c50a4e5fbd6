"""Block-list message content (Mistral Magistral): text is the reply, thinking is kept apart.

The bodies follow Mistral's wire shape for reasoning models: ``content`` is a list holding a
``thinking`` block (whose ``thinking`` is a list of text chunks) and ``text`` blocks.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime
from typing import Any

import httpx
import pytest

from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.chat_parse import parse_chat_completion
from oracleproto.providers.content_blocks import echo_text, split_content
from oracleproto.providers.detector import LeakDetector
from oracleproto.providers.llm import OpenAIChatClient
from oracleproto.providers.types import SearchResult
from oracleproto.scoring.parser import last_boxed
from oracleproto.settings.model import DetectorSettings, LLMSettings
from oracleproto.sim.loopback import LoopbackServer
from tests.providers.scripted import Script, json_response

THINKING = "The schedule slipped twice before, so \\boxed{A} looks tempting — but check the dates."


def magistral_body(*texts: str, thinking: str | None = THINKING, **message: Any) -> dict[str, Any]:
    """A Magistral-shaped chat completion: one thinking block, then the given text blocks."""
    blocks: list[dict[str, Any]] = []
    if thinking is not None:
        blocks.append({"type": "thinking", "thinking": [{"type": "text", "text": thinking}]})
    blocks += [{"type": "text", "text": t} for t in texts]
    return {
        "id": "cmpl-9f2",
        "object": "chat.completion",
        "created": 1760000000,
        "model": "magistral-medium-2509",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "tool_calls": None, "content": blocks, **message},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 120, "total_tokens": 410, "completion_tokens": 290},
    }


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


async def test_main_llm_reads_only_the_text_blocks(http: httpx.AsyncClient) -> None:
    script = Script(json_response(magistral_body("Weighing it all, ", "the answer is \\boxed{B}.")))
    with LoopbackServer(script) as server:
        client = OpenAIChatClient(
            http,
            LLMSettings(_env_file=None),  # type: ignore[call-arg]
            FakeClock(),
            base_url=server.base_url + "/v1",
            api_key="sk-test-0123456789abcdef",
        )
        response = await client.complete(
            "mistral/magistral-medium-2509", [{"role": "user", "content": "Q"}], []
        )
    assert response.content == "Weighing it all, the answer is \\boxed{B}."
    assert response.reasoning == THINKING
    assert last_boxed(response.content) == "B"
    # What goes back to the provider next turn is plain text, without the scratchpad.
    assert response.assistant_message["content"] == response.content
    assert "thinking" not in json.dumps(response.assistant_message)
    assert response.served_model == "magistral-medium-2509" and response.usage.completion_tokens == 290


async def test_detector_never_reads_a_verdict_from_thinking(http: httpx.AsyncClient) -> None:
    result = SearchResult("t", "https://example.org/p", "c", None, "2025-01-01")
    drop_in_thinking = magistral_body('{"verdict": "keep", "reason": "fine"}', thinking='{"verdict": "drop"}')
    only_thinking = magistral_body(thinking='{"verdict": "keep", "reason": "fine"}')
    script = Script(json_response(drop_in_thinking), json_response(only_thinking))
    clock = FakeClock()
    with LoopbackServer(script) as server:
        llm = LLMSettings(_env_file=None, base_url=server.base_url + "/v1")  # type: ignore[call-arg]
        settings = DetectorSettings(_env_file=None, model="mistral/magistral-small", retry_max=0)  # type: ignore[call-arg]
        detector = LeakDetector(http, settings, llm, clock)
        kept = await detector.judge(result, date(2025, 3, 14))
        unread = await detector.judge(result, date(2025, 3, 14))
    assert kept.label == "keep" and kept.reason == "fine"
    # A verdict that exists only in the thinking is no verdict at all.
    assert unread.label == "failed:parse"


WHEN = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("content", "text", "reasoning"),
    [
        ("plain", "plain", None),
        (None, None, None),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "ab", None),
        # Anthropic-style thinking: a string under the type's own key.
        (
            [{"type": "thinking", "thinking": "hmm", "signature": "x"}, {"type": "text", "text": "ok"}],
            "ok",
            "hmm",
        ),
        # A reply cut off while still thinking has no text at all.
        ([{"type": "thinking", "thinking": [{"type": "text", "text": "still"}]}], None, "still"),
        # Reference chunks between text pieces are not text.
        (
            [
                {"type": "text", "text": "x"},
                {"type": "reference", "reference_ids": [1]},
                {"type": "text", "text": "y"},
            ],
            "xy",
            None,
        ),
        # Not a block list: JSON text, as before (Cloudflare's structured output).
        ({"title": "t"}, '{"title": "t"}', None),
        ([1, 2], "[1, 2]", None),
        # Only unknown block types: nothing vanishes.
        (
            [{"type": "image_url", "image_url": {"url": "u"}}],
            '[{"type": "image_url", "image_url": {"url": "u"}}]',
            None,
        ),
    ],
)
def test_split_content(content: Any, text: str | None, reasoning: str | None) -> None:
    split = split_content(content)
    assert (split.text, split.reasoning) == (text, reasoning)


THINKING_BLOCK = {"type": "thinking", "thinking": "hmm"}
IMAGE_BLOCK = {"type": "image_url", "image_url": {"url": "u"}}


@pytest.mark.parametrize(
    ("content", "echoed", "parsed"),
    [
        # Profile §2 (provider_order): the text blocks joined, null when every block is reasoning ...
        ([THINKING_BLOCK, {"type": "text", "text": "a"}, {"type": "output_text", "text": "b"}], "ab", "ab"),
        ([THINKING_BLOCK, {"type": "reasoning", "text": "x"}], None, None),
        # ... so a list without text blocks but not only reasoning echoes as "", while the answer
        # parser still reads the unknown blocks as JSON text (nothing vanishes from the reply).
        ([IMAGE_BLOCK], "", json.dumps([IMAGE_BLOCK])),
        ([THINKING_BLOCK, IMAGE_BLOCK], "", None),
        # Not a block list: its JSON text in both.
        ([], "[]", "[]"),
        ({"title": "t"}, '{"title": "t"}', '{"title": "t"}'),
        ("plain", "plain", "plain"),
        (None, None, None),
    ],
)
def test_the_provider_order_echo_follows_the_profile(
    content: Any, echoed: str | None, parsed: str | None
) -> None:
    assert echo_text(content) == echoed
    body = {"id": "r", "choices": [{"message": {"role": "assistant", "content": content}}]}
    response = parse_chat_completion(
        json.dumps(body), latency_ms=1, received_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    assert response.assistant_message is not None
    assert (response.assistant_message["content"], response.content) == (echoed, parsed)


def test_tool_calls_next_to_thinking_blocks_parse() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": '{"query": "q"}'}}
    body = magistral_body(thinking="search first")
    body["choices"][0]["message"]["tool_calls"] = [call]
    body["choices"][0]["finish_reason"] = "tool_calls"
    response = parse_chat_completion(json.dumps(body), latency_ms=1, received_at=WHEN)
    assert response.content is None and response.reasoning == "search first"
    assert [c.name for c in response.tool_calls] == ["web_search"]
    assert response.assistant_message["content"] is None
