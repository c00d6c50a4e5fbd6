"""Accumulates one sample's trajectory and turns it into a :class:`SampleResult`.

Latency is the sum of the *recorded* latencies of the LLM turns and search calls on the path
(``ChatResponse.latency_ms``, ``SearchOutcome.latency_ms``), never the wall clock, so a replayed
sample reproduces the stored value byte for byte. ``created_at`` is likewise the recorded
``received_at`` of the last LLM response. docs/design/record-replay.md ("Time is data") defines both, retries
and shared calls included.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from oracleproto.agent.result import SampleResult
from oracleproto.dataset.models import Question, letter_index
from oracleproto.profile.model import AssistantEcho
from oracleproto.providers.echo import echo_message
from oracleproto.providers.types import ChatResponse, Message, Usage
from oracleproto.scoring.parser import parse_belief

_PROVIDER_ORDER = AssistantEcho("provider_order")


@dataclass
class Trajectory:
    """Mutable per-sample record the loop appends to."""

    question: Question
    belief: bool
    #: How each assistant reply is sent back (the profile's ``assistant_echo``).
    echo: AssistantEcho = _PROVIDER_ORDER
    messages: list[Message] = field(default_factory=list)
    step_metrics: list[dict[str, Any]] = field(default_factory=list)
    belief_trace: list[dict[str, Any]] = field(default_factory=list)
    last: ChatResponse | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    llm_latency_ms: int = 0
    retry_used: bool = False
    #: ``REACT_MIN_SEARCH_CALLS`` nudges sent (the ``earlier`` injection policy only).
    nudges: int = 0

    def add_user(self, text: str) -> None:
        """Append a user message (the prompt, a harness injection or the retry directive)."""
        self.messages.append({"role": "user", "content": text})

    def add_turn(self, step_index: int, response: ChatResponse) -> None:
        """Record one LLM turn (0-based ``step_index``) and append its assistant message."""
        usage = response.usage
        self.prompt_tokens += usage.prompt_tokens or 0
        self.completion_tokens += usage.completion_tokens or 0
        self.reasoning_tokens += usage.reasoning_tokens or 0
        self.llm_latency_ms += response.latency_ms
        belief = self._belief_of(response.content)
        self.step_metrics.append(
            {
                "step": step_index,
                "prompt": usage.prompt_tokens,
                "completion": usage.completion_tokens,
                "reasoning": usage.reasoning_tokens,
                "cached": usage.cached_tokens,
                "cost_usd": usage.cost_usd,
                "latency_ms": response.latency_ms,
                "finish_reason": response.finish_reason,
                "n_tool_calls": len(response.tool_calls),
                "belief": belief,
            }
        )
        if self.belief:
            self.belief_trace.append({"step": step_index, "belief": belief})
        self.messages.append(echo_message(response, self.echo))
        self.last = response

    def failed_result(
        self,
        *,
        error: str,
        created_at: datetime,
        usage: Usage | None,
        latency_ms: int | None,
        search_calls: list[dict[str, Any]],
    ) -> SampleResult:
        """An error row that keeps what was billed before the failure (docs/design/metrics.md, Cost).

        Counters and token columns stay 0 as run-layout.md fixes for a call error; ``step_metrics``
        holds the completed turns plus, when the failed call's final reply reported usage, an
        entry with ``error``; ``search_calls`` holds the searches made. NULL when nothing was billed.
        """
        steps = list(self.step_metrics)
        if usage is not None:
            steps.append(
                {
                    "step": len(self.step_metrics),
                    **usage.record(),
                    "latency_ms": latency_ms,
                    "finish_reason": None,
                    "n_tool_calls": 0,
                    "belief": None,
                    "error": error,
                }
            )
        return replace(
            SampleResult.empty(error=error, created_at=created_at),
            step_metrics=steps or None,
            search_calls=list(search_calls) or None,
        )

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
            # The earlier implementation's count: searches executed (failed ones too), not every tool
            # call the model issued; its analysis averages it as avg_tool_calls
            # (docs/design/architecture.md, Agent).
            tool_calls_count=len(search_calls),
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
            # Only REACT_MIN_SEARCH_CALLS nudges count, as in the earlier implementation: harness
            # injections and the final-answer retry are no nudges.
            nudges_used=self.nudges,
            step_metrics=list(self.step_metrics),
            response_id=last.response_id if last is not None else None,
            system_fingerprint=last.system_fingerprint if last is not None else None,
            service_tier=last.service_tier if last is not None else None,
            belief_final=belief_final if self.belief else None,
            belief_trace=list(self.belief_trace) if self.belief else None,
            belief_parse_ok=(belief_final is not None) if self.belief else None,
            final_answer_retry_used=self.retry_used,
        )
