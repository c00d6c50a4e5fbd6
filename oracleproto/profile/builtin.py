"""The built-in harness profile: what oracleproto sends when no profile is given.

These are oracleproto's own texts and wire choices; every recording made before profiles existed
was made with exactly these bytes, so runs recorded then replay unchanged. The protocol texts
live in ``prompts/protocol_texts.py`` (the renderer's defaults); everything else is here.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from oracleproto.profile.model import HarnessProfile
from oracleproto.prompts.protocol_texts import (
    BELIEF_PROTOCOL_TEXT,
    BUDGET_FOOTER_TEXT,
    DEFAULT_SEPARATOR,
    DEFAULT_SUFFIX,
    REFLECTION_PROTOCOL_TEXT,
)

BUILTIN_NAME = "oracleproto"

#: The leak detector's prompt template (paper App. B.5); placeholders are the six whitelisted fields.
DETECTOR_TEMPLATE = """\
You audit one web page for temporal leakage. The cutoff date is {{cutoff_date}} (ISO 8601).
Decide whether the page reveals, reports or anticipates anything that happens after {{cutoff_date}}.

Rules:
1. Judge only from the text given below. Do not use outside knowledge or your own memory of events.
2. Any event after the cutoff date counts as leakage, whether the page reports it as done, \
scheduled, announced, planned, predicted or speculated.
3. A page published after the cutoff date counts as leakage.
4. When in doubt, the verdict is "drop". Use "keep" only when the page clearly stays at or before \
the cutoff date.
5. Reply with a single line of JSON and nothing else: \
{"verdict": "keep" or "drop", "reason": "<one short sentence>"}

Page:
title: {{title}}
url: {{url}}
published_date: {{published_date}}
content: {{content}}
raw_content: {{raw_content}}
"""

#: The only tool the model sees; its schema exposes ``query`` alone (the cutoff is the harness's).
WEB_SEARCH_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web. Results are limited to pages published before the forecast cutoff.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "The search query."}},
            "required": ["query"],
        },
    },
}

_COMPACT = {"item_separator": ",", "key_separator": ":", "ensure_ascii": False}
_MISSING_QUERY = {"code": "missing_query", "message": 'a non-empty string "query" argument is required'}
_INJECTIONS = {
    "hard_cutoff": "{{status_header}}\nThis is the final step and tools are disabled. Reply now with your "
    "final answer as \\boxed{...} in plain content, without any tool call.",
    "soft_warning": "{{status_header}}\nThe step limit is close. You may make one more web_search if it is "
    "decisive; otherwise commit your final answer as \\boxed{...} now.",
    "soft_warning_no_search": None,
    "budget_exhausted": "{{status_header}}\nThe web_search budget is used up and tools are revoked. Continue "
    "without searching and commit your final answer as \\boxed{...} on this turn or the next.",
    "unboxed_continuation": "{{status_header}}\nYour last reply contained no parseable \\boxed{...} answer. "
    "Resume your reasoning, or commit your final answer as \\boxed{...} now.",
    "nudge": None,
    "final_answer_retry": "{{status_header}}\nYour final reply was empty. Reply with your final answer as "
    "\\boxed{...} and nothing that calls a tool.",
}
_ERRORS = {
    "search_disabled": {
        "code": "unknown_tool",
        "message": "unknown tool {{tool_name}}; no tools are available in this run",
    },
    "unknown_tool": {
        "code": "unknown_tool",
        "message": "unknown tool {{tool_name}}; the only tool is 'web_search'",
    },
    "budget_exceeded": {
        "code": "search_budget_exceeded",
        "message": "all {{max_search_calls}} searches are used; no search was made. Answer with \\boxed{...}",
    },
    "tools_unavailable": {
        "code": "tools_unavailable",
        "message": "tools are disabled on this step; no search was made. Answer with \\boxed{...}",
    },
    "bad_json": {
        "code": "bad_arguments",
        "message": 'arguments are not valid JSON ({{json_error}}); send {"query": "..."}',
    },
    "not_object": {
        "code": "bad_arguments",
        "message": 'arguments must be a JSON object such as {"query": "..."}',
    },
    "missing_query": _MISSING_QUERY,
    "query_not_string": _MISSING_QUERY,
    "empty_query": _MISSING_QUERY,
}


def builtin_profile_data() -> dict[str, Any]:
    """The built-in profile as plain data (a fresh copy each call)."""
    return copy.deepcopy(_builtin_data())


def _tool_parts() -> dict[str, Any]:
    """How tool calls are checked and answered, and how results are shown and truncated."""
    return {
        "tool_calls": {
            "checks": [
                "search_disabled",
                "unknown_tool",
                "budget_exceeded",
                "tools_unavailable",
                "arguments",
                "query",
            ],
            "blank_arguments_are_empty": True,
            "query_whitespace": "strip",
            "errors": {kind: dict(entry) for kind, entry in _ERRORS.items()},
            "error_payload": [
                {"key": "error", "text": "{{code}}"},
                {"key": "message", "text": "{{message}}"},
                {"key": "status", "text": "{{status_header}}"},
            ],
            # The tool name as Python writes it (quoted, escaped): what the built-in messages always said.
            "tool_name_format": "python_repr",
        },
        "tool_result": {
            "payload_keys": ["query", "n_results", "results", "answer", "status"],
            "result_keys": ["title", "url", "published_date", "score", "content", "raw_content"],
            "absent_field": "null",
            "raw_content_empty_is_absent": False,
            "failure_payload": [
                {"key": "error", "text": "search_failed"},
                {"key": "kind", "text": "{{error_kind}}"},
                {
                    "key": "message",
                    "text": "the search failed ({{error_kind}}); it counts against the budget",
                },
                {"key": "status", "text": "{{status_header}}"},
            ],
        },
        "truncation": {
            "fields": ["title", "content", "raw_content"],
            "marker": "\n[page truncated: {{omitted_chars}} more characters not shown]",
            "detector_sees_marker": False,
        },
    }


def _builtin_data() -> dict[str, Any]:
    return {
        "profile_version": 1,
        "name": BUILTIN_NAME,
        "description": "oracleproto's own harness: its built-in texts and wire format.",
        "request_json": {
            "llm": dict(_COMPACT),
            "detector": dict(_COMPACT),
            # tavily-python's json.dumps defaults, which the recordings made through it carry.
            "search": {"item_separator": ", ", "key_separator": ": ", "ensure_ascii": True},
            "tool_message_content": {"item_separator": ", ", "key_separator": ": ", "ensure_ascii": False},
        },
        "llm_request": {
            "key_order": [
                "model",
                "messages",
                "tools",
                "temperature",
                "top_p",
                "max_completion_tokens",
                "max_tokens",
                "seed",
            ],
            "tool_schema": WEB_SEARCH_TOOL_SCHEMA,
            "assistant_echo": {"mode": "provider_order"},
        },
        "prompt": {"outcome_line": "{{letter}}. {{label}}", "outcome_line_other": "{{letter}}. {{label}}"},
        "protocols": {
            "separator": DEFAULT_SEPARATOR,
            "suffix": DEFAULT_SUFFIX,
            "blocks": [
                {"name": "reflection", "text": REFLECTION_PROTOCOL_TEXT},
                {"name": "belief", "text": BELIEF_PROTOCOL_TEXT},
                {"name": "budget", "text": BUDGET_FOOTER_TEXT},
            ],
        },
        "texts": {
            "search_clause": "web_search {{used}}/{{max_search_calls}} used ({{searches_left}} left)",
            "search_clause_disabled": None,
            "status_header": "[Harness status] step {{step}}/{{max_steps}} "
            "({{steps_left_after_current}} remaining) · {{search_clause}}.",
            "tool_error_status": None,
            "tool_error_hint_strips": None,
            "tool_error_hint_default": None,
            "injections": dict(_INJECTIONS),
        },
        "injection_policy": "oracleproto",
        **_tool_parts(),
        "detector": {
            "key_order": ["model", "messages", "temperature", "max_tokens"],
            "template": DETECTOR_TEMPLATE,
            "missing": {
                "published_date": {"text": "(not given)", "when": "absent_null_or_empty"},
                "raw_content": {"text": "(not given)", "when": "absent_or_null"},
            },
        },
        "search_request": {
            "api_key_in": "header",
            "key_order": [
                "query",
                "search_depth",
                "end_date",
                "include_answer",
                "include_raw_content",
                "max_results",
            ],
            "include_raw_content_value": True,
            "include_answer_value": True,
            "include_answer_when_off": "false",
        },
        "request_sharing": "identical_search_and_detector",
        "fingerprints": {
            "protocol_blocks": "text",
            "budget_block": "filled_text",
            "detector_template": "format_spelling",
        },
    }


@cache
def builtin_profile() -> HarnessProfile:
    """The built-in profile, validated like any other (once per process)."""
    from oracleproto.profile.parse import profile_from_data

    return profile_from_data(builtin_profile_data(), source="the built-in harness profile")
