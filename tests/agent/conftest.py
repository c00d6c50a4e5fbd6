"""Scripted fakes for the ReAct loop: a ChatModel that replays queued responses and records
what it was given, and a SearchTool that records its arguments. Exposed through the ``kit``
fixture because test modules cannot import each other under ``--import-mode=importlib``."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from oracleproto.agent import run_sample
from oracleproto.agent.result import SampleResult
from oracleproto.context import CallContext, current_call_context
from oracleproto.dataset.models import Question
from oracleproto.primitives.clock import FakeClock
from oracleproto.profile import HarnessProfile, load_profile
from oracleproto.providers.types import (
    ChatResponse,
    Message,
    SearchAudit,
    SearchOutcome,
    SearchResult,
    ToolCall,
    ToolSchema,
    Usage,
)
from oracleproto.settings.model import ReactSettings

WEB_SEARCH = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web (results are limited to before the prediction cutoff).",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}
#: The directive line (after the status header) of each built-in injection: today's bytes, pinned.
DIRECTIVES = {
    "hard_cutoff": (
        "This is the final step and tools are disabled. Reply now with your final answer as "
        "\\boxed{...} in plain content, without any tool call."
    ),
    "soft_warning": (
        "The step limit is close. You may make one more web_search if it is decisive; otherwise "
        "commit your final answer as \\boxed{...} now."
    ),
    "budget_exhausted": (
        "The web_search budget is used up and tools are revoked. Continue without searching and "
        "commit your final answer as \\boxed{...} on this turn or the next."
    ),
    "unboxed_continuation": (
        "Your last reply contained no parseable \\boxed{...} answer. Resume your reasoning, or "
        "commit your final answer as \\boxed{...} now."
    ),
}
#: The directive of the built-in bail-out retry (``REACT_FINAL_ANSWER_RETRY``).
RETRY_DIRECTIVE = (
    "Your final reply was empty. Reply with your final answer as \\boxed{...} and nothing that calls a tool."
)
CUTOFF = date(2025, 6, 14)
T0 = datetime(2025, 7, 1, 9, 0, tzinfo=UTC)
CLOCK_START = datetime(2026, 1, 1, tzinfo=UTC)

MC_SINGLE = Question(
    id="q-mc",
    choice_type="single",
    question_type="multiple_choice",
    event="Which team wins the 2025 final?",
    options=("Red", "Blue", "Green", "Gold"),
    answer=frozenset({"B"}),
    end_time=date(2025, 6, 15),
)
MC_MULTI = Question(
    id="q-multi",
    choice_type="multi",
    question_type="multiple_choice",
    event="Which cities host a stage?",
    options=("Oslo", "Rome", "Lima", "Pune"),
    answer=frozenset({"A", "C"}),
    end_time=date(2025, 6, 15),
)


@dataclass
class Call:
    """What the fake chat model saw on one call."""

    model: str
    messages: list[Message]
    tools: list[ToolSchema]
    context: CallContext | None


@dataclass
class FakeChat:
    """Returns queued responses (or raises queued exceptions) in order."""

    script: list[ChatResponse | Exception]
    #: When set, chooses each response from the tools offered (overrides ``script``).
    policy: Callable[[list[ToolSchema]], ChatResponse] | None = None
    calls: list[Call] = field(default_factory=list)

    async def complete(
        self, model: str, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> ChatResponse:
        self.calls.append(
            Call(model, json.loads(json.dumps(list(messages))), list(tools), current_call_context())
        )
        if self.policy is not None:
            return self.policy(list(tools))
        if not self.script:
            raise AssertionError(f"the loop made call {len(self.calls)} but the script has no more turns")
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        return item


@dataclass
class FakeSearch:
    """Answers every query with two dated results; ``fail`` / ``raise_`` script failures by query."""

    fail: dict[str, str] = field(default_factory=dict)
    raise_: dict[str, Exception] = field(default_factory=dict)
    answer: str | None = None
    calls: list[tuple[str, date, int, CallContext | None]] = field(default_factory=list)

    async def search(self, query: str, end_date: date, max_results: int) -> SearchOutcome:
        self.calls.append((query, end_date, max_results, current_call_context()))
        if query in self.raise_:
            raise self.raise_[query]
        n = len(self.calls)
        if query in self.fail:
            return SearchOutcome(query, end_date, (), None, (), None, self.fail[query], 40 + n)
        # The first result carries a score and a page body; the second has neither, as Tavily
        # sends when it could not extract the page.
        results = tuple(
            SearchResult(
                title=f"{query} — source {i}",
                url=f"https://news.example/{n}/{i}",
                content=f"Report {i} about {query}.",
                raw_content=None if i else f"Full page {i} about {query}.",
                published_date=f"2025-06-0{i + 1}",
                score=None if i else 0.87,
            )
            for i in range(2)
        )
        dates = ("2025-06-01", "2025-06-02", "2025-06-20")
        audit = SearchAudit(3, 2, ("keep", "keep", "drop"), 30, None, dates)
        return SearchOutcome(query, end_date, results, self.answer, dates, audit, None, 200 + n)


class Kit:
    """Builders for scripted responses and a one-call runner."""

    web_search = WEB_SEARCH
    directives = DIRECTIVES
    retry_directive = RETRY_DIRECTIVE
    cutoff = CUTOFF
    clock_start = CLOCK_START
    mc_single = MC_SINGLE
    mc_multi = MC_MULTI
    FakeSearch = FakeSearch

    def __init__(self) -> None:
        self._n = 0

    def _response(
        self, content: str | None, calls: tuple[ToolCall, ...], finish: str | None = None
    ) -> ChatResponse:
        self._n += 1
        n = self._n
        message: Message = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                for c in calls
            ]
        return ChatResponse(
            content=content,
            tool_calls=calls,
            finish_reason=finish or ("tool_calls" if calls else "stop"),
            usage=Usage(prompt_tokens=100 * n, completion_tokens=10 * n, reasoning_tokens=n),
            response_id=f"resp-{n}",
            system_fingerprint=f"fp-{n}",
            service_tier="default",
            served_model="vendor/model-x",
            latency_ms=1000 + n,
            received_at=T0 + timedelta(seconds=n),
            assistant_message=message,
        )

    @staticmethod
    def search_response_time(n: int) -> datetime:
        """``received_at`` of the n-th scripted response (1-based)."""
        return T0 + timedelta(seconds=n)

    def reply(self, content: str | None, *, finish: str | None = None) -> ChatResponse:
        """A content-only assistant turn."""
        return self._response(content, (), finish)

    def tools(self, *calls: tuple[str, str], content: str | None = None) -> ChatResponse:
        """A tool-call turn; each call is (name, raw JSON arguments)."""
        base = self._n + 1
        return self._response(
            content,
            # The provider sent these ids (raw_id), as a body parsed by chat_parse would say.
            tuple(
                ToolCall(f"call_{base}_{i}", name, args, raw_id=f"call_{base}_{i}")
                for i, (name, args) in enumerate(calls)
            ),
        )

    def search(self, *queries: str, content: str | None = None) -> ChatResponse:
        """A turn with one web_search call per query."""
        return self.tools(*(("web_search", json.dumps({"query": q})) for q in queries), content=content)

    async def run(
        self,
        script: list[ChatResponse | Exception],
        *,
        question: Question = MC_SINGLE,
        search: FakeSearch | None = None,
        no_search: bool = False,
        tools: list[ToolSchema] | None = None,
        write_trace: bool = True,
        belief: bool = False,
        policy: Callable[[list[ToolSchema]], ChatResponse] | None = None,
        profile: HarnessProfile | None = None,
        **react: Any,
    ) -> tuple[SampleResult, FakeChat, FakeSearch]:
        """Run one sample against the fakes; ``react`` overrides ReactSettings fields; ``profile``
        None runs the loop's default (the built-in profile)."""
        chat = FakeChat(list(script), policy)
        fake_search = search or FakeSearch()
        result = await run_sample(
            question=question,
            user_prompt=f"Forecast: {question.event}",
            model="vendor/model-x",
            chat=chat,
            search=None if no_search else fake_search,
            tools=([] if no_search else [WEB_SEARCH]) if tools is None else tools,
            react=ReactSettings(_env_file=None, **react),  # type: ignore[call-arg]
            max_results=5,
            prediction_cutoff=CUTOFF,
            context=CallContext(model="vendor/model-x::r5::c4", question_id=question.id, sample=1),
            clock=FakeClock(CLOCK_START),
            write_trace=write_trace,
            belief=belief,
            profile=profile,
        )
        return result, chat, fake_search


@pytest.fixture(scope="session")
def earlier_profile(earlier_harness: Path) -> HarnessProfile:
    """The earlier implementation's harness profile, loaded from ../shared in place."""
    return load_profile(earlier_harness / "earlier-harness.profile.json")


@pytest.fixture
def kit() -> Kit:
    """A fresh builder (response numbering starts at 1)."""
    return Kit()
