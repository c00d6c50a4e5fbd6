"""The harness status header and the four runtime injection paths (paper App. B.4, Table 12).

Step numbering (used by every text the model sees): step ``k`` is the k-th LLM call of the
sample, ``1 ≤ k ≤ N`` with ``N = REACT_MAX_STEPS``. A header ``step k/N (R remaining)`` belongs
to step ``k``: an injected user message is read by the step-``k`` call, and a tool message answers
a tool call made by the step-``k`` call. ``R = N − k`` is the number of LLM calls left *after*
step ``k``. ``s`` is the number of searches executed so far and ``M = C − s``.

Everything here is pure: the loop feeds in its counters and gets back text and a decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Injection(StrEnum):
    """The four Table 12 paths, in descending priority."""

    HARD_CUTOFF = "hard_cutoff"
    SOFT_WARNING = "soft_warning"
    BUDGET_COMMIT = "budget_commit"
    UNBOXED_CONTINUATION = "unboxed_continuation"


#: Directive line of each path (the line after the status header).
DIRECTIVES: dict[Injection, str] = {
    Injection.HARD_CUTOFF: (
        "This is the final step and tools are disabled. Reply now with your final answer as "
        "\\boxed{...} in plain content, without any tool call."
    ),
    Injection.SOFT_WARNING: (
        "The step limit is close. You may make one more web_search if it is decisive; otherwise "
        "commit your final answer as \\boxed{...} now."
    ),
    Injection.BUDGET_COMMIT: (
        "The web_search budget is used up and tools are revoked. Continue without searching and "
        "commit your final answer as \\boxed{...} on this turn or the next."
    ),
    Injection.UNBOXED_CONTINUATION: (
        "Your last reply contained no parseable \\boxed{...} answer. Resume your reasoning, or "
        "commit your final answer as \\boxed{...} now."
    ),
}

#: Directive of the bail-out retry (``REACT_FINAL_ANSWER_RETRY``), which is not a Table 12 path.
RETRY_DIRECTIVE = (
    "Your final reply was empty. Reply with your final answer as \\boxed{...} and nothing that calls a tool."
)


@dataclass(frozen=True)
class Counters:
    """The live counters of one sample at one step."""

    step: int
    max_steps: int
    searches: int
    max_searches: int

    def header(self) -> str:
        """The status header ``[Harness status] step k/N (R remaining) · web_search s/C used (M left).``"""
        remaining = self.max_steps - self.step
        left = self.max_searches - self.searches
        return (
            f"[Harness status] step {self.step}/{self.max_steps} ({remaining} remaining) · "
            f"web_search {self.searches}/{self.max_searches} used ({left} left)."
        )


def choose_injection(
    counters: Counters,
    *,
    lookahead: int,
    drop_tools: bool,
    last_turn_unboxed: bool,
) -> Injection | None:
    """The one Table 12 path that fires at the top of this step, or None.

    ``last_turn_unboxed`` is true when the previous assistant turn was content-only (no tool
    calls) and its content had no parseable ``\\boxed{...}`` — empty content included.
    """
    step, n = counters.step, counters.max_steps
    budget_spent = counters.searches >= counters.max_searches
    if step == n:
        return Injection.HARD_CUTOFF
    if n - step < lookahead and not budget_spent:
        return Injection.SOFT_WARNING
    if budget_spent and drop_tools:
        return Injection.BUDGET_COMMIT
    if last_turn_unboxed:
        return Injection.UNBOXED_CONTINUATION
    return None


def tools_revoked(injection: Injection | None) -> bool:
    """Whether this step's tool list is empty (Table 12, "Tool list this turn")."""
    return injection in (Injection.HARD_CUTOFF, Injection.BUDGET_COMMIT)


def injection_text(injection: Injection, counters: Counters) -> str:
    """The user message of an injection: status header, newline, directive."""
    return f"{counters.header()}\n{DIRECTIVES[injection]}"


def retry_text(counters: Counters) -> str:
    """The user message of the bail-out retry: status header, newline, retry directive."""
    return f"{counters.header()}\n{RETRY_DIRECTIVE}"
