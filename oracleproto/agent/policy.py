"""Which injection fires at the top of a step, and whether the step offers tools (schema §5).

Two named policies. ``oracleproto`` is the paper's Table 12 as this harness always ran it; ``earlier``
is the earlier implementation's: forced finalisation only inside the lookahead window, the
budget-exhausted notice once per sample, no continuation notice after a nudged reply, nudges
(``REACT_MIN_SEARCH_CALLS``) and its own final-answer retry rule. Pure: no I/O, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from oracleproto.profile.model import InjectionPolicy


@dataclass(frozen=True)
class Limits:
    """The run quantities a policy reads (schema §1), fixed for one sample."""

    #: N = REACT_MAX_STEPS.
    max_steps: int
    #: C = the configured search cap (the grid cell's).
    max_searches: int
    #: E: the sample may search (C > 0 and a search tool is given).
    search_enabled: bool
    #: D = REACT_BUDGET_EXCEEDED_DROP_TOOLS.
    drop_tools: bool
    #: L = REACT_FORCE_FINAL_ANSWER_LOOKAHEAD.
    lookahead: int
    #: MIN = REACT_MIN_SEARCH_CALLS.
    min_searches: int = 0
    #: MAXN = REACT_MAX_NUDGES.
    max_nudges: int = 0
    #: F = REACT_FORCE_FINAL_ANSWER_NEAR_LIMIT (oracleproto has no such switch: always on).
    force_near_limit: bool = True

    @property
    def shown_cap(self) -> int:
        """C_shown: the cap the model is told."""
        return self.max_searches if self.search_enabled else 0


@dataclass
class PolicyState:
    """What the policies remember across the steps of one sample."""

    #: s: searches executed so far (failed ones count).
    searches: int = 0
    #: The previous step's reply was content-only without a parseable answer.
    previous_unboxed: bool = False
    #: The previous step's reply was answered by a nudge.
    previous_nudged: bool = False
    budget_notice_sent: bool = False
    nudges: int = 0


@dataclass(frozen=True)
class StepPlan:
    """The top of one step: the injection to send (or None) and whether tools are offered."""

    injection: str | None
    offers_tools: bool


def plan_step(policy: InjectionPolicy, limits: Limits, step: int, state: PolicyState) -> StepPlan:
    """The injection that fires at the top of ``step`` (1-based) and whether tools are offered."""
    if policy == "earlier":
        return _earlier(limits, step, state)
    return _oracleproto(limits, step, state)


def _earlier(limits: Limits, step: int, state: PolicyState) -> StepPlan:
    n, s = limits.max_steps, state.searches
    spent = limits.drop_tools and s >= limits.max_searches
    injection: str | None = None
    if limits.force_near_limit and n - step + 1 <= limits.lookahead:
        if step == n:
            injection = "hard_cutoff"
        elif limits.shown_cap == 0 or s >= limits.shown_cap:
            injection = "soft_warning_no_search"
        else:
            injection = "soft_warning"
    elif spent and not state.budget_notice_sent:
        injection = "budget_exhausted"
        state.budget_notice_sent = True
    elif state.previous_unboxed and not state.previous_nudged:
        injection = "unboxed_continuation"
    return StepPlan(injection, injection != "hard_cutoff" and not spent)


def _oracleproto(limits: Limits, step: int, state: PolicyState) -> StepPlan:
    n, cap = limits.max_steps, limits.shown_cap
    spent = state.searches >= cap
    injection: str | None = None
    if step == n:
        injection = "hard_cutoff"
    elif n - step < limits.lookahead and not spent:
        injection = "soft_warning"
    elif spent and limits.drop_tools and limits.search_enabled:
        injection = "budget_exhausted"
    elif state.previous_unboxed:
        injection = "unboxed_continuation"
    return StepPlan(injection, injection not in ("hard_cutoff", "budget_exhausted"))


def budget_cap(policy: InjectionPolicy, limits: Limits) -> int:
    """The cap the ``budget_exceeded`` check compares s against (§5): C, or C_shown."""
    return limits.max_searches if policy == "earlier" else limits.shown_cap


def strips_hint(limits: Limits, step: int, searches: int) -> bool:
    """``earlier``: a tool error uses the strips hint at step N or once the budget is spent and dropped."""
    return step == limits.max_steps or (limits.drop_tools and searches >= limits.max_searches)


def should_nudge(limits: Limits, step: int, state: PolicyState) -> bool:
    """``earlier``: a content-only reply at ``step`` is answered by a nudge instead of being read."""
    return (
        limits.search_enabled
        and limits.min_searches > 0
        and limits.max_nudges > 0
        and state.searches < limits.min_searches
        and state.nudges < limits.max_nudges
        and step < limits.max_steps
    )
