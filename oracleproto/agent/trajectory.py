"""Accumulates one sample's trajectory and turns it into a :class:`SampleResult`.

Latency is the sum of the *recorded* latencies of the LLM turns and search calls on the path
(``ChatResponse.latency_ms``, ``SearchOutcome.latency_ms``), never the wall clock, so a replayed
sample reproduces the stored value byte for byte. ``created_at`` is likewise the recorded
``received_at`` of the last LLM response. docs/design.md ("Time is data") defines both, retries
and shared calls included.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from oracleproto.agent.result import SampleResult
from oracleproto.dataset.models import Question, letter_index
from oracleproto.parser import parse_belief
from oracleproto.providers.types import ChatResponse, Message


def assistant_message(response: ChatResponse) -> Message:
    """The assistant message to append: the provider's, or one rebuilt from the parsed fields."""
    if response.assistant_message:
        return copy.deepcopy(response.assistant_message)
    message: Message = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in response.tool_calls
        ]
    return message


@dataclass
class Trajectory:
    """Mutable per-sample record the loop appends to."""

    question: Question
    belief: bool
    messages: list[Message] = field(default_factory=list)
    step_metrics: list[dict[str, Any]] = field(default_factory=list)
    belief_trace: list[dict[str, Any]] = field(default_factory=list)
    last: ChatResponse | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    llm_latency_ms: int = 0
    tool_calls_count: int = 0
    nudges_used: int = 0
    retry_used: bool = False

    def add_user(self, text: str, *, nudge: bool) -> None:
        """Append a user message; harness injections count as nudges."""
        self.messages.append({"role": "user", "content": text})
        if nudge:
            self.nudges_used += 1

    def add_turn(self, step_index: int, response: ChatResponse) -> None:
        """Record one LLM turn (0-based ``step_index``) and append its assistant message."""
        usage = response.usage
        self.prompt_tokens += usage.prompt_tokens or 0
        self.completion_tokens += usage.completion_tokens or 0
        self.reasoning_tokens += usage.reasoning_tokens or 0
        self.llm_latency_ms += response.latency_ms
        self.tool_calls_count += len(response.tool_calls)
        belief = self._belief_of(response.content)
        self.step_metrics.append(
            {
                "step": step_index,
                "prompt": usage.prompt_tokens,
                "completion": usage.completion_tokens,
                "reasoning": usage.reasoning_tokens,
                "latency_ms": response.latency_ms,
                "finish_reason": response.finish_reason,
                "n_tool_calls": len(response.tool_calls),
                "belief": belief,
            }
        )
        if self.belief:
            self.belief_trace.append({"step": step_index, "belief": belief})
        self.messages.append(assistant_message(response))
        self.last = response

    def _belief_of(self, text: str | None) -> dict[str, float] | None:
        if not self.belief or not text:
            return None
        parsed = parse_belief(text, self.question)
        return parsed.as_dict() if parsed is not None else None

    def result(
        self,
        *,
        letters: frozenset[str] | None,
        search_calls: list[dict[str, Any]],
        search_latency_ms: int,
        write_trace: bool,
        fallback_time: datetime,
    ) -> SampleResult:
        """The stored result; ``letters`` None is the invalid-output marker."""
        last = self.last
        final_raw = last.content if last is not None else None
        belief_final = self._belief_of(final_raw)
        return SampleResult(
            final_answer_letters=tuple(sorted(letters, key=letter_index)) if letters is not None else None,
            final_answer_raw=final_raw,
            correct=(letters == self.question.answer) if letters is not None else None,
            parse_ok=letters is not None,
            tool_calls_count=self.tool_calls_count,
            react_steps=len(self.step_metrics),
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            reasoning_tokens=self.reasoning_tokens,
            latency_ms=self.llm_latency_ms + search_latency_ms,
            messages_trace=copy.deepcopy(self.messages) if write_trace else None,
            search_calls=list(search_calls),
            error=None,
            created_at=last.received_at if last is not None else fallback_time,
            finish_reason=last.finish_reason if last is not None else None,
            nudges_used=self.nudges_used,
            step_metrics=list(self.step_metrics),
            response_id=last.response_id if last is not None else None,
            system_fingerprint=last.system_fingerprint if last is not None else None,
            service_tier=last.service_tier if last is not None else None,
            belief_final=belief_final if self.belief else None,
            belief_trace=list(self.belief_trace) if self.belief else None,
            belief_parse_ok=(belief_final is not None) if self.belief else None,
            final_answer_retry_used=self.retry_used,
        )
