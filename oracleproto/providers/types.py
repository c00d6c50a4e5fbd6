"""Provider-neutral types exchanged between the providers and the agent loop.

The agent loop depends only on these types and the two protocols below, so it can be
tested with in-process fakes and run against the real clients unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol

#: An OpenAI chat message as sent on the wire (``role``, ``content``, ``tool_calls``, …).
Message = dict[str, Any]
#: An OpenAI tool schema (``{"type": "function", "function": {...}}``).
ToolSchema = dict[str, Any]
#: A tool call's ``id`` as the provider sent it: a JSON value other than null, a string in practice.
#: harness-profile.md §2 replaces only a missing or empty one, so a number or an object is echoed,
#: and answered, as it came.
ToolCallId = str | int | float | bool | list[Any] | dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model; ``arguments`` is the raw JSON string."""

    #: The id the harness uses: the provider's, or a synthesised one when it sent none.
    id: ToolCallId
    name: str
    arguments: str
    #: The provider's own id, ``None`` when it was missing (absent or null) or the empty string. A
    #: profile that echoes the provider's message unchanged (``declared_order``) answers with this one.
    raw_id: ToolCallId | None = None


@dataclass(frozen=True)
class Usage:
    """Token usage of one completion; ``None`` where the provider did not report it."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    reasoning_tokens: int | None = None
    #: What the provider billed for the call in USD (``usage.cost``, or xAI's ticks converted).
    cost_usd: float | None = None
    #: Prompt tokens served from the provider's prompt cache (billed at a discount).
    cached_tokens: int | None = None

    @property
    def reported(self) -> bool:
        """True when the provider reported any token count or cost."""
        values = (self.prompt_tokens, self.completion_tokens, self.reasoning_tokens, self.cost_usd)
        return any(v is not None for v in (*values, self.cached_tokens))

    def record(self) -> dict[str, Any]:
        """The billing keys stored per call (``step_metrics`` entries, ``detector_usage`` items)."""
        return {
            "prompt": self.prompt_tokens,
            "completion": self.completion_tokens,
            "reasoning": self.reasoning_tokens,
            "cached": self.cached_tokens,
            "cost_usd": self.cost_usd,
        }


@dataclass(frozen=True)
class ChatResponse:
    """A parsed chat completion, with provider markers copied verbatim."""

    content: str | None
    tool_calls: tuple[ToolCall, ...]
    finish_reason: str | None
    usage: Usage
    response_id: str | None
    system_fingerprint: str | None
    service_tier: str | None
    served_model: str | None
    latency_ms: int
    received_at: datetime
    #: The assistant message to append to the conversation, as the provider returned it
    #: (normalised: string content, tool-call ids never empty).
    assistant_message: Message = field(default_factory=dict)
    #: Thinking blocks of a block-list content (Mistral Magistral), kept out of ``content`` so the
    #: answer parser and the leak detector never read them; ``None`` when there were none.
    reasoning: str | None = None
    #: ``choices[0].message`` exactly as parsed from the body (key order included, nothing
    #: normalised): what a ``declared_order`` profile echoes. Empty when not built from a body.
    provider_message: Message = field(default_factory=dict)


class ChatModel(Protocol):
    """The main-LLM channel as the agent loop sees it."""

    async def complete(
        self, model: str, messages: Sequence[Message], tools: Sequence[ToolSchema]
    ) -> ChatResponse:
        """One logical chat completion (retries inside); raises ``CallFailedError``."""
        ...


@dataclass(frozen=True)
class SearchResult:
    """One search result as it may reach the model (text already truncated)."""

    title: str
    url: str
    content: str
    raw_content: str | None
    published_date: str | None
    score: float | None = None
    #: Characters of the page body cut off beyond ``SEARCH_RESULT_MAX_CHARS`` (0: the body is whole).
    raw_content_cut: int = 0
    #: The profile's truncation marker, filled, when the page body was cut ("" otherwise): the model
    #: sees ``raw_content + truncation_marker``.
    truncation_marker: str = ""


@dataclass(frozen=True)
class SearchAudit:
    """Detector audit metadata of one search call (paper Table 15)."""

    n_results_raw: int
    n_results_kept: int
    detector_verdicts: tuple[str, ...]
    detector_latency_ms: int
    detector_error_kind: str | None
    published_dates_raw: tuple[str | None, ...]
    #: Per raw result, the usage the detector's final reply reported (``None``: nothing billed).
    detector_usage: tuple[Usage | None, ...] = ()


@dataclass(frozen=True)
class SearchOutcome:
    """Result of one time-masked, leak-filtered search call."""

    query: str
    end_date: date
    results: tuple[SearchResult, ...]
    answer: str | None
    published_dates_raw: tuple[str | None, ...]
    audit: SearchAudit | None
    error_kind: str | None
    latency_ms: int
    #: On a failure, what went wrong as the earlier harness wrote it (``HTTP 502: <body>``,
    #: ``ConnectError: …``), secrets scrubbed; a profile's failure payload may show it. Not in ``to_record``.
    error_detail: str | None = None

    def to_record(self) -> dict[str, Any]:
        """The ``search_calls`` list entry of run-layout.md for this call."""
        record: dict[str, Any] = {
            "query": self.query,
            "end_date": self.end_date.isoformat(),
            "n_results": 0 if self.error_kind else len(self.results),
            "published_dates": list(self.published_dates_raw),
        }
        if self.audit is not None:
            record.update(
                n_results_raw=self.audit.n_results_raw,
                n_results_kept=self.audit.n_results_kept,
                detector_verdicts=list(self.audit.detector_verdicts),
                detector_latency_ms=self.audit.detector_latency_ms,
                detector_error_kind=self.audit.detector_error_kind,
            )
            usage = self.audit.detector_usage
            if len(usage) == self.audit.n_results_raw:
                # Table 15's length invariant: one item per raw result, like detector_verdicts.
                record["detector_usage"] = [u.record() if u is not None else None for u in usage]
        if self.error_kind:
            record["error_kind"] = self.error_kind
        return record


class SearchTool(Protocol):
    """The time-masked search channel (search + leak filter) as the agent loop sees it."""

    async def search(self, query: str, end_date: date, max_results: int) -> SearchOutcome:
        """Search with the harness-held cutoff; failures come back as ``error_kind``."""
        ...
