"""The harness profile as typed, immutable data (docs/harness-profile.md, schema version 1).

A profile holds every byte-level choice by which two harnesses of the protocol can differ in what
they send to the main LLM, the leak detector and Tavily. Run settings (models, N, C, R, switches,
sampling) stay in the run configuration. Objects whose key order reaches the wire
(``tool_schema``, a payload entry's ``json`` value) are kept exactly as loaded.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from oracleproto.primitives.safe_text import escape_surrogates

InjectionPolicy = Literal["earlier", "oracleproto"]
RequestSharing = Literal["none", "identical_search_and_detector"]
EchoMode = Literal["declared_order", "provider_order"]
AbsentField = Literal["omit", "null"]
MissingWhen = Literal["absent_or_null", "absent_null_or_empty"]
ToolNameFormat = Literal["as_sent", "python_repr"]


@dataclass(frozen=True)
class JsonStyle:
    """How one channel serialises JSON: separators and whether non-ASCII is escaped."""

    item_separator: str
    key_separator: str
    ensure_ascii: bool

    def dumps(self, value: Any) -> str:
        """``json.dumps(value, ensure_ascii=…, separators=(item, key))``, total over Unicode.

        A lone surrogate (untrusted text can hold one) has no UTF-8 form: it is written as its
        ``\\uXXXX`` escape, which is valid JSON and decodes to the same string.
        """
        text = json.dumps(
            value,
            ensure_ascii=self.ensure_ascii,
            separators=(self.item_separator, self.key_separator),
            allow_nan=False,
        )
        return text if self.ensure_ascii else escape_surrogates(text)

    def encode(self, value: Any) -> bytes:
        """The UTF-8 bytes of :meth:`dumps`."""
        return self.dumps(value).encode("utf-8")


@dataclass(frozen=True)
class RequestJson:
    """Serialisation per channel (§1)."""

    llm: JsonStyle
    detector: JsonStyle
    search: JsonStyle
    tool_message_content: JsonStyle


@dataclass(frozen=True)
class AssistantEcho:
    """How an assistant reply is sent back in later requests (§2)."""

    mode: EchoMode
    #: Per object kind (``message``, ``tool_call``, …), the keys that come first, in order.
    declared_key_orders: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class LlmRequest:
    """The main-LLM request body (§2)."""

    key_order: tuple[str, ...]
    #: The sole element of ``tools``, written exactly as given (key order included). Never mutated.
    tool_schema: Mapping[str, Any]
    assistant_echo: AssistantEcho


@dataclass(frozen=True)
class PromptLines:
    """The multiple-choice outcome lines (§3)."""

    outcome_line: str
    outcome_line_other: str


@dataclass(frozen=True)
class BlockSpec:
    """One protocol block: its text and how it is framed (§3)."""

    name: str
    text: str
    separator: str | None = None
    terminator: str | None = None
    text_search_disabled: str | None = None


@dataclass(frozen=True)
class Protocols:
    """The runtime protocol blocks appended to the rendered template (§3)."""

    separator: str
    suffix: str
    blocks: tuple[BlockSpec, ...]

    def block(self, name: str) -> BlockSpec | None:
        """The block called ``name``, None when the profile has none."""
        return next((b for b in self.blocks if b.name == name), None)


@dataclass(frozen=True)
class Injections:
    """The injected user messages (§4); None where the policy never sends one."""

    hard_cutoff: str | None
    soft_warning: str | None
    soft_warning_no_search: str | None
    budget_exhausted: str | None
    unboxed_continuation: str | None
    nudge: str | None
    final_answer_retry: str | None


@dataclass(frozen=True)
class Texts:
    """Status texts and injections (§4)."""

    search_clause: str
    search_clause_disabled: str | None
    status_header: str
    tool_error_status: str | None
    tool_error_hint_strips: str | None
    tool_error_hint_default: str | None
    injections: Injections


@dataclass(frozen=True)
class PayloadEntry:
    """One member of a built payload: a filled ``text`` or a literal ``json`` value."""

    key: str
    text: str | None = None
    #: The literal value (only when ``is_json``); objects keep their key order.
    json_value: Any = None
    is_json: bool = False


@dataclass(frozen=True)
class ErrorText:
    """The ``code`` and ``message`` of one tool-call error kind (§6)."""

    code: str | None
    message: str


@dataclass(frozen=True)
class ToolCalls:
    """Tool-call validation and error payloads (§6)."""

    checks: tuple[str, ...]
    blank_arguments_are_empty: bool
    query_whitespace: Literal["keep", "strip"]
    errors: Mapping[str, ErrorText]
    error_payload: tuple[PayloadEntry, ...]
    #: Extension: how ``{{tool_name}}`` is written (``python_repr``: Python ``repr()`` of the name).
    tool_name_format: ToolNameFormat = "as_sent"


@dataclass(frozen=True)
class ToolResult:
    """The search tool message's payload (§7)."""

    payload_keys: tuple[str, ...]
    result_keys: tuple[str, ...]
    absent_field: AbsentField
    raw_content_empty_is_absent: bool
    failure_payload: tuple[PayloadEntry, ...]


@dataclass(frozen=True)
class Truncation:
    """How long result fields are cut (§7)."""

    fields: tuple[str, ...]
    marker: str
    detector_sees_marker: bool


@dataclass(frozen=True)
class MissingText:
    """What the detector prompt shows for a missing field (§8)."""

    text: str
    when: MissingWhen


@dataclass(frozen=True)
class DetectorSpec:
    """The leak detector's request (§8)."""

    key_order: tuple[str, ...]
    template: str
    missing: Mapping[str, MissingText]


@dataclass(frozen=True)
class SearchRequest:
    """The Tavily request (§9)."""

    api_key_in: Literal["body", "header"]
    key_order: tuple[str, ...]
    #: Sent as ``include_raw_content`` when page bodies are requested (``true``, ``"markdown"``, …).
    include_raw_content_value: bool | str
    #: ``"depth"`` (the configured depth string) or the literal value sent when answers are requested.
    include_answer_value: bool | str
    include_answer_when_off: Literal["omit", "false"]


@dataclass(frozen=True)
class Fingerprints:
    """How the protocol and detector fingerprints of ``run_meta`` are computed (§11)."""

    protocol_blocks: Literal["text", "framed"]
    budget_block: Literal["none", "filled_text"]
    detector_template: Literal["template_text", "format_spelling"]


@dataclass(frozen=True)
class HarnessProfile:
    """A whole harness profile (schema version 1)."""

    profile_version: int
    name: str
    description: str
    notes: tuple[str, ...]
    request_json: RequestJson
    llm_request: LlmRequest
    prompt: PromptLines
    protocols: Protocols
    texts: Texts
    injection_policy: InjectionPolicy
    tool_calls: ToolCalls
    tool_result: ToolResult
    truncation: Truncation
    detector: DetectorSpec
    search_request: SearchRequest
    request_sharing: RequestSharing
    fingerprints: Fingerprints
