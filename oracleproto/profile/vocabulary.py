"""The names a profile may use: keys, checks, error kinds, payload members and the placeholders per text."""

from __future__ import annotations

from oracleproto.profile.placeholders import COUNTERS

PROFILE_VERSION = 1

TOP_KEYS = (
    "profile_version",
    "name",
    "description",
    "request_json",
    "llm_request",
    "prompt",
    "protocols",
    "texts",
    "injection_policy",
    "tool_calls",
    "tool_result",
    "truncation",
    "detector",
    "search_request",
    "request_sharing",
    "fingerprints",
)
OPTIONAL_TOP_KEYS = ("notes",)
JSON_CHANNELS = ("llm", "detector", "search", "tool_message_content")

LLM_BODY_KEYS = (
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "tools",
    "seed",
)
DETECTOR_BODY_KEYS = ("model", "messages", "max_tokens", "temperature")
SEARCH_BODY_KEYS = (
    "api_key",
    "query",
    "max_results",
    "search_depth",
    "end_date",
    "include_raw_content",
    "include_answer",
)
ECHO_MODES = ("declared_order", "provider_order")
DECLARED_KINDS = (
    "message",
    "tool_call",
    "custom_tool_call",
    "function",
    "custom",
    "function_call",
    "audio",
    "annotation",
    "url_citation",
)
BLOCK_NAMES = ("budget", "reflection", "belief")
INJECTIONS = (
    "hard_cutoff",
    "soft_warning",
    "soft_warning_no_search",
    "budget_exhausted",
    "unboxed_continuation",
    "nudge",
    "final_answer_retry",
)
#: Injections a policy may send whatever the run settings are (so they may not be null).
POLICY_INJECTIONS = {
    "earlier": (
        "hard_cutoff",
        "soft_warning",
        "soft_warning_no_search",
        "budget_exhausted",
        "unboxed_continuation",
    ),
    "oracleproto": ("hard_cutoff", "soft_warning", "budget_exhausted", "unboxed_continuation"),
}
POLICIES = ("earlier", "oracleproto")
CHECKS = ("search_disabled", "unknown_tool", "budget_exceeded", "tools_unavailable", "arguments", "query")
#: The error kinds each check can give.
CHECK_ERRORS = {
    "search_disabled": ("search_disabled",),
    "unknown_tool": ("unknown_tool",),
    "budget_exceeded": ("budget_exceeded",),
    "tools_unavailable": ("tools_unavailable",),
    "arguments": ("bad_json", "not_object"),
    "query": ("missing_query", "query_not_string", "empty_query"),
}
ERROR_KINDS = tuple(kind for kinds in CHECK_ERRORS.values() for kind in kinds)
PAYLOAD_KEYS = ("query", "n_results", "results", "answer", "status")
RESULT_KEYS = ("title", "url", "content", "published_date", "score", "raw_content")
TRUNCATABLE = ("title", "url", "content", "raw_content")
DETECTOR_FIELDS = ("title", "url", "published_date", "content", "raw_content")
MISSING_WHEN = ("absent_or_null", "absent_null_or_empty")
RAW_CONTENT_VALUES = (True, "markdown", "text")
ANSWER_VALUES = ("depth", True, "basic", "advanced")
SHARING = ("none", "identical_search_and_detector")
TOOL_NAME_FORMATS = ("as_sent", "python_repr")

# -- placeholders allowed per text (§4, §6, §7, §8) -------------------------------------------
P_CLAUSE = COUNTERS
P_STATUS = (*COUNTERS, "search_clause")
P_TOOL_ERROR_STATUS = (*COUNTERS, "search_clause", "tool_error_hint")
P_HINT = COUNTERS
P_INJECTION = (*COUNTERS, "search_clause", "status_header")
P_NUDGE = (*P_INJECTION, "min_search_calls")
P_ERROR_MESSAGE = (*COUNTERS, "tool_name", "json_error")
P_ERROR_PAYLOAD = (*COUNTERS, "code", "message", "status_header", "tool_error_status")
P_FAILURE_PAYLOAD = (*COUNTERS, "status_header", "error_kind", "detail")
P_MARKER = ("max_chars", "omitted_chars")
P_DETECTOR = ("cutoff_date", *DETECTOR_FIELDS)
P_OUTCOME = ("letter", "label")
P_BLOCK = ("max_steps", "max_search_calls")
