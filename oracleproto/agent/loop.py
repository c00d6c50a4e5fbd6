"""The time-masked ReAct loop for one sample (paper Algorithm 1, App. B.4).

For step k = 1..N: evaluate the Table 12 injection paths (at most one fires), call the model
inside ``call_context(context.at_step(k − 1))`` (the transport keys main-LLM entries on it),
then either execute the tool calls of the turn or try to parse a content-only turn. The sample
ends on a parseable ``\\boxed{...}`` in a content-only turn (parseable under
``react.answer_parser``), or after step N with the invalid-output marker. A tool-call turn is
never an answer, even if its content has a box.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from oracleproto.agent.policy import Limits, PolicyState, plan_step, should_nudge
from oracleproto.agent.result import SampleResult
from oracleproto.agent.status import Counters, StatusTexts
from oracleproto.agent.tools import ToolRound, ToolState, check_refusable, check_tool_schemas
from oracleproto.agent.trajectory import Trajectory
from oracleproto.context import CallContext, call_context
from oracleproto.dataset.models import Question
from oracleproto.errors import CallFailedError, ConfigError, RunStoppedError
from oracleproto.primitives.clock import Clock
from oracleproto.profile import HarnessProfile, builtin_profile
from oracleproto.providers.billing import BilledCallFailedError
from oracleproto.providers.echo import tool_call_id_for
from oracleproto.providers.types import ChatModel, ChatResponse, SearchTool, ToolSchema
from oracleproto.scoring.parser import parse_answer
from oracleproto.settings.model import AnswerParser, ReactSettings


@dataclass(frozen=True)
class _Caller:
    """The main-LLM channel bound to one sample: every call is keyed by its step."""

    chat: ChatModel
    model: str
    context: CallContext
    trajectory: Trajectory

    async def complete(self, tools: list[ToolSchema], step_index: int) -> ChatResponse:
        """One LLM turn at 0-based ``step_index``, recorded in the trajectory."""
        with call_context(self.context.at_step(step_index)):
            # A snapshot: later appends must not change what this call was given.
            response = await self.chat.complete(self.model, list(self.trajectory.messages), list(tools))
        self.trajectory.add_turn(step_index, response)
        return response


@dataclass(frozen=True)
class _Sample:
    """The fixed parts of one sample's loop: its profile, limits and texts."""

    profile: HarnessProfile
    limits: Limits
    status: StatusTexts
    search: SearchTool | None
    tools: list[ToolSchema]
    end_date: date
    max_results: int
    parser: AnswerParser

    def counters(self, step: int, searches: int) -> Counters:
        limits = self.limits
        return Counters(step, limits.max_steps, searches, limits.shown_cap, limits.min_searches)


def _limits(react: ReactSettings, search_enabled: bool, profile: HarnessProfile) -> Limits:
    if react.min_search_calls and profile.injection_policy != "earlier":
        raise ConfigError(
            f"REACT_MIN_SEARCH_CALLS={react.min_search_calls}: the harness profile {profile.name!r} uses the "
            "'oracleproto' injection policy, which has no nudges (the paper runs with 0 and the reflection "
            "scaffold drives search depth); set it to 0, or use a profile with the 'earlier' policy"
        )
    return Limits(
        max_steps=react.max_steps,
        max_searches=react.max_search_calls,
        search_enabled=search_enabled,
        drop_tools=react.budget_exceeded_drop_tools,
        lookahead=react.force_final_answer_lookahead,
        min_searches=react.min_search_calls,
        max_nudges=react.max_nudges,
    )


async def run_sample(
    *,
    question: Question,
    user_prompt: str,
    model: str,
    chat: ChatModel,
    search: SearchTool | None,
    tools: list[ToolSchema],
    react: ReactSettings,
    max_results: int,
    prediction_cutoff: date,
    context: CallContext,
    clock: Clock,
    write_trace: bool,
    belief: bool,
    profile: HarnessProfile | None = None,
) -> SampleResult:
    """Run Algorithm 1 for one (question, sample) and return what the store persists.

    ``model`` is the real slug sent to the provider; ``context`` carries the virtual slug and
    sample identity. ``prediction_cutoff`` (χ) goes to every search as ``end_date``. ``profile``
    (default: the built-in one) decides every text and payload the model is sent. A terminal
    ``CallFailedError`` becomes the ``error`` of the result; ``RunStoppedError`` (auth, quota) propagates.
    """
    profile = profile if profile is not None else builtin_profile()
    check_tool_schemas(tools, search)
    # Searching needs both the tool and its schema; without them the sample cannot search.
    active_search = search if tools else None
    sample = _Sample(
        profile=profile,
        limits=_limits(react, active_search is not None, profile),
        status=StatusTexts(profile.texts),
        search=active_search,
        tools=tools,
        end_date=prediction_cutoff,
        max_results=max_results,
        parser=react.answer_parser,
    )
    check_refusable(profile, sample.limits)
    trajectory = Trajectory(question=question, belief=belief, echo=profile.llm_request.assistant_echo)
    caller = _Caller(chat, model, context, trajectory)
    trajectory.add_user(user_prompt)
    tool_state = ToolState(searches=0, search_records=[])
    try:
        letters = await _loop(sample, caller, question, tool_state, react.final_answer_retry)
    except RunStoppedError:
        raise
    except CallFailedError as exc:
        # The sample ends when its failed call's final outcome arrived: the recorded time the
        # provider attaches (the sample may have had no successful LLM call at all).
        ended = exc.received_at
        if ended is None:
            ended = trajectory.last.received_at if trajectory.last is not None else clock.now()
        return trajectory.failed_result(
            error=exc.kind.value,
            created_at=ended,
            usage=exc.usage if isinstance(exc, BilledCallFailedError) else None,
            latency_ms=exc.latency_ms,
            search_calls=tool_state.search_records,
        )
    return trajectory.result(
        letters=letters,
        search_calls=tool_state.search_records,
        search_latency_ms=tool_state.latency_ms,
        write_trace=write_trace,
        fallback_time=clock.now(),
    )


async def _loop(
    sample: _Sample, caller: _Caller, question: Question, tool_state: ToolState, retry: bool
) -> frozenset[str] | None:
    """Steps 1..N (and the final-answer retry); the parsed answer, or None (invalid output)."""
    profile, limits, trajectory = sample.profile, sample.limits, caller.trajectory
    state = PolicyState()
    letters: frozenset[str] | None = None
    #: The latest content-only reply that was not nudged (the earlier policy's retry rule reads it).
    last_read: ChatResponse | None = None
    for step in range(1, limits.max_steps + 1):
        state.searches = tool_state.searches
        plan = plan_step(profile.injection_policy, limits, step, state)
        if plan.injection is not None:
            counters = sample.counters(step, tool_state.searches)
            trajectory.add_user(sample.status.injection(plan.injection, counters))
        offered = sample.tools if plan.offers_tools else []
        response = await caller.complete(offered, step - 1)
        state.previous_unboxed = state.previous_nudged = False
        if response.tool_calls:
            await _answer_tools(sample, caller, response, step, offered=bool(offered), tool_state=tool_state)
            continue
        state.searches = tool_state.searches
        if profile.injection_policy == "earlier" and should_nudge(limits, step, state):
            # The reply is not read for an answer: the nudge asks for more searching first.
            state.nudges += 1
            state.previous_nudged = True
            trajectory.nudges = state.nudges
            trajectory.add_user(sample.status.injection("nudge", sample.counters(step, tool_state.searches)))
            continue
        last_read = response
        letters = parse_answer(response.content or "", question, mode=sample.parser)
        if letters is not None:
            return letters
        state.previous_unboxed = True
    if retry and _needs_retry(sample, trajectory.last, last_read):
        return await _final_answer_retry(sample, caller, question, tool_state.searches)
    return letters


async def _answer_tools(
    sample: _Sample,
    caller: _Caller,
    response: ChatResponse,
    step: int,
    *,
    offered: bool,
    tool_state: ToolState,
) -> None:
    """Answer the tool calls of one reply (searches run on behalf of the same sample and step)."""
    echo = sample.profile.llm_request.assistant_echo
    round_ = ToolRound(
        profile=sample.profile,
        status=sample.status,
        limits=sample.limits,
        search=sample.search,
        tools_offered=offered,
        step=step,
        end_date=sample.end_date,
        max_results=sample.max_results,
        call_ids=[tool_call_id_for(call, echo) for call in response.tool_calls],
    )
    # The replay-miss errors of the searches name the same sample and step.
    with call_context(caller.context.at_step(step - 1)):
        messages = await round_.answer(response.tool_calls, tool_state)
    caller.trajectory.messages.extend(messages)


def _needs_retry(sample: _Sample, last: ChatResponse | None, last_read: ChatResponse | None) -> bool:
    """Whether ``REACT_FINAL_ANSWER_RETRY`` makes one more call after the loop ended unanswered.

    ``oracleproto``: the last reply's content is blank (tool-call replies count too), the corner
    case the paper names (an empty final text after the hard cutoff). ``earlier``: the latest
    content-only reply that was not nudged has empty content (or there was none).
    """
    if sample.profile.injection_policy == "earlier":
        return ((last_read.content if last_read is not None else None) or "") == ""
    return last is not None and not (last.content or "").strip()


async def _final_answer_retry(
    sample: _Sample, caller: _Caller, question: Question, searches: int
) -> frozenset[str] | None:
    """One tool-less extra call; it repeats step N in its texts and uses step index N in the call
    context, so it has its own key. Its reply is an answer only without tool calls, except under the
    ``earlier`` policy, which reads the reply's content whatever it also holds (as that harness did)."""
    trajectory = caller.trajectory
    trajectory.retry_used = True
    n = sample.limits.max_steps
    trajectory.add_user(sample.status.injection("final_answer_retry", sample.counters(n, searches)))
    response = await caller.complete([], n)
    if response.tool_calls and sample.profile.injection_policy != "earlier":
        return None
    return parse_answer(response.content or "", question, mode=sample.parser)
