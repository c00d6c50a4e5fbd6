"""Tool-call execution inside the assistant–tool cycle (paper Algorithm 1 lines 9–16, schema §6).

Every tool call gets exactly one tool message, in the order the model issued them. The profile's
checks run in its order; the first that fails answers the call with the profile's error payload
(errors never become a user turn: that would break message ordering). A call that passes every
check runs a search, whose tool message carries the kept results or the failure (§7).

The model controls only ``query``. The cutoff χ is held by the harness and passed as
``end_date``; every other argument the model sends (``end_date``, ``max_results``, …) is ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from oracleproto.agent.payloads import build_payload, failure_payload, search_payload
from oracleproto.agent.policy import Limits, budget_cap, strips_hint
from oracleproto.agent.status import Counters, StatusTexts
from oracleproto.errors import ConfigError
from oracleproto.profile.model import HarnessProfile
from oracleproto.profile.placeholders import fill
from oracleproto.providers.types import Message, SearchTool, ToolCall, ToolCallId, ToolSchema

SEARCH_TOOL_NAME = "web_search"


def check_tool_schemas(tools: list[ToolSchema], search: SearchTool | None) -> None:
    """Refuse a tool list the loop cannot execute (only ``web_search`` backed by a SearchTool)."""
    for index, schema in enumerate(tools):
        function = schema.get("function") if isinstance(schema, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(schema, dict) or schema.get("type") != "function" or name != SEARCH_TOOL_NAME:
            raise ConfigError(
                f"agent tools[{index}]: expected a function schema named {SEARCH_TOOL_NAME!r}, got "
                f"{name!r}; the ReAct loop executes only {SEARCH_TOOL_NAME!r} (the profile's tool_schema)"
            )
    if tools and search is None:
        raise ConfigError(
            f"agent: the {SEARCH_TOOL_NAME!r} schema is offered but no SearchTool was given; "
            "pass a SearchTool or an empty tool list"
        )


def check_refusable(profile: HarnessProfile, limits: Limits) -> None:
    """Refuse a sample that cannot search under a profile that could not refuse a search call.

    Without a search tool (E false) a ``web_search`` call must fail one of the profile's checks:
    ``search_disabled``, or ``budget_exceeded`` with a cap of 0. A profile naming neither (the
    earlier harness's, with C > 0) would run the search there, which this loop cannot do.
    """
    if limits.search_enabled:
        return
    checks = profile.tool_calls.checks
    cap = budget_cap(profile.injection_policy, limits)
    if "search_disabled" in checks or ("budget_exceeded" in checks and cap == 0):
        return
    budget = "nor 'budget_exceeded'"
    if "budget_exceeded" in checks:
        budget = f"and its 'budget_exceeded' cap is {cap}, not 0"
    raise ConfigError(
        f"the harness profile {profile.name!r} cannot refuse a {SEARCH_TOOL_NAME!r} call in a sample "
        f"without search: tool_calls.checks has no 'search_disabled', {budget}; pass a SearchTool and "
        "the schema, set REACT_MAX_SEARCH_CALLS=0, or add the 'search_disabled' check and its error"
    )


@dataclass
class ToolState:
    """What tool execution changes: the search counter and the audit records of the sample."""

    searches: int
    search_records: list[dict[str, Any]]
    latency_ms: int = 0


@dataclass(frozen=True)
class _Failure:
    kind: str
    json_error: str = ""


@dataclass
class ToolRound:
    """One assistant turn's tool calls: who answers them and with which counters."""

    profile: HarnessProfile
    status: StatusTexts
    limits: Limits
    search: SearchTool | None
    tools_offered: bool
    step: int
    end_date: date
    max_results: int
    #: The tool_call_id each call's message carries (per the profile's echo mode).
    call_ids: list[ToolCallId] = field(default_factory=list)

    def counters(self, state: ToolState) -> Counters:
        """Read at answer time: a search earlier in the same turn shows in later statuses."""
        return Counters(
            self.step, self.limits.max_steps, state.searches, self.limits.shown_cap, self.limits.min_searches
        )

    def _message(self, call_id: ToolCallId, payload: dict[str, Any]) -> Message:
        content = self.profile.request_json.tool_message_content.dumps(payload)
        return {"role": "tool", "tool_call_id": call_id, "content": content}

    def _tool_name(self, call: ToolCall) -> str:
        return repr(call.name) if self.profile.tool_calls.tool_name_format == "python_repr" else call.name

    def _check(self, call: ToolCall, state: ToolState) -> tuple[_Failure | None, str | None]:
        """The first failing check (§6), else the query to search."""
        calls = self.profile.tool_calls
        arguments, parse_error = _arguments(call.arguments, calls.blank_arguments_are_empty)
        for check in calls.checks:
            if check == "search_disabled" and not self.limits.search_enabled:
                return _Failure("search_disabled"), None
            if check == "unknown_tool" and call.name != SEARCH_TOOL_NAME:
                return _Failure("unknown_tool"), None
            if check == "budget_exceeded" and state.searches >= budget_cap(
                self.profile.injection_policy, self.limits
            ):
                return _Failure("budget_exceeded"), None
            if check == "tools_unavailable" and not self.tools_offered:
                return _Failure("tools_unavailable"), None
            if check == "arguments" and parse_error is not None:
                return _Failure(parse_error[0], json_error=parse_error[1]), None
            if check == "query":
                problem = _query_problem(arguments)
                if problem is not None:
                    return _Failure(problem), None
        query = arguments.get("query") if arguments is not None else None
        if not isinstance(query, str):
            # Validation requires the arguments and query checks, so this cannot pass them.
            return _Failure("missing_query"), None
        return None, query.strip() if calls.query_whitespace == "strip" else query

    def _error(self, call: ToolCall, call_id: ToolCallId, failure: _Failure, state: ToolState) -> Message:
        counters = self.counters(state)
        calls = self.profile.tool_calls
        error = calls.errors[failure.kind]
        values: dict[str, str | None] = dict(self.status.values(counters))
        # Every error message may name the tool (§6), not only the unknown-tool ones.
        values["tool_name"] = self._tool_name(call)
        values["json_error"] = failure.json_error
        message = fill(error.message, {k: v for k, v in values.items() if v is not None})
        strips = strips_hint(self.limits, self.step, state.searches)
        values.update(
            code=error.code,
            message=message,
            tool_error_status=self.status.tool_error_status(counters, strips=strips),
        )
        return self._message(call_id, build_payload(calls.error_payload, values))

    async def answer(self, calls: tuple[ToolCall, ...], state: ToolState) -> list[Message]:
        """Answer each tool call of one assistant turn, in order; executed searches update ``state``."""
        messages: list[Message] = []
        for call, call_id in zip(calls, self.call_ids, strict=True):
            failure, query = self._check(call, state)
            if failure is not None or query is None or self.search is None:
                messages.append(self._error(call, call_id, failure or _Failure("search_disabled"), state))
                continue
            # The harness-held cutoff: nothing the model sent reaches end_date.
            outcome = await self.search.search(query, self.end_date, self.max_results)
            state.searches += 1
            state.search_records.append(outcome.to_record())
            state.latency_ms += outcome.latency_ms
            values = self.status.values(self.counters(state))
            if outcome.error_kind:
                payload = failure_payload(self.profile, outcome, values)
            else:
                payload = search_payload(self.profile, outcome, values["status_header"])
            messages.append(self._message(call_id, payload))
        return messages


def _arguments(raw: str | None, blank_is_empty: bool) -> tuple[dict[str, Any] | None, tuple[str, str] | None]:
    """The parsed arguments object, or the ``arguments`` check's (error kind, JSON message)."""
    text = raw if isinstance(raw, str) else json.dumps(raw)
    if raw is None or text == "" or (blank_is_empty and not text.strip()):
        return {}, None
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, ("bad_json", exc.msg)
    except RecursionError:
        return None, ("bad_json", "nested too deeply")
    except ValueError as exc:  # an integer past sys.get_int_max_str_digits: Python's json raises this
        return None, ("bad_json", str(exc))
    if not isinstance(parsed, dict):
        return None, ("not_object", "")
    return parsed, None


def _query_problem(arguments: dict[str, Any] | None) -> str | None:
    """The ``query`` check's error kind, or None when the query is a non-blank string."""
    query = arguments.get("query") if arguments is not None else None
    if query is None:
        return "missing_query"
    if not isinstance(query, str):
        return "query_not_string"
    if not query.strip():
        return "empty_query"
    return None
