"""Runtime protocols appended after the static template (paper App. B.4), each fingerprinted.

The texts below are ours (the paper describes the protocols, not their wording). They are
generic on purpose: one text per run, so its fingerprint can go into ``run_meta`` and the
manifest. Only the budget footer varies, with T and C.
"""

from __future__ import annotations

from dataclasses import dataclass

from oracleproto.errors import ConfigError
from oracleproto.hashing import sha256_16
from oracleproto.settings import ReactSettings

REFLECTION_PROTOCOL_TEXT = """\
Work through the following six stages before you commit to an answer:
1. Decompose: break the question into the sub-questions that decide the outcome, and note \
what would have to be true for each candidate answer.
2. Plan retrieval: list at least three distinct search angles (for example official sources, \
recent reporting, and base rates or historical precedent) before you search.
3. Reflect after each search: state briefly what the results changed in your view, and what \
is still missing.
4. Cross-validate: confirm every key fact with at least two independent sources; say so \
explicitly when only one source supports it.
5. Contrarian self-check: make the strongest case for the answer you are leaning against, \
and check whether the evidence actually rules it out.
6. State your confidence as exactly one of: low, medium, high."""

BELIEF_PROTOCOL_TEXT = """\
Alongside the boxed answer, report your probabilities in a belief block of this exact form:
<belief>{"A": 0.7, "B": 0.3}</belief>
The block is a JSON object with one entry for every option letter and no other keys; for a \
yes/no question, A is Yes and B is No, and for a two-outcome question A and B are the two \
outcomes in the order given. Every probability is a number between 0 and 1. If exactly one \
option can be correct, the probabilities must sum to 1. If several options can be correct, \
give each option's own probability of being correct, independently of the others. Put the \
belief block before the final boxed answer."""

_BUDGET_FOOTER_TEMPLATE = """\
Budget: you have at most {max_steps} message rounds in total and at most {max_search_calls} \
web_search calls. Plan your searches within this budget; when it runs out you must answer \
with what you have, and your final message must still end with the boxed answer."""


@dataclass(frozen=True)
class Budget:
    """The ReAct budget the footer announces: message-round cap T and search-call cap C."""

    max_steps: int
    max_search_calls: int

    def __post_init__(self) -> None:
        if self.max_steps <= 0:
            raise ConfigError(f"budget footer: max_steps (T) must be > 0, got {self.max_steps}")
        if self.max_search_calls < 0:
            raise ConfigError(
                f"budget footer: max_search_calls (C) must be >= 0, got {self.max_search_calls}"
            )


def budget_footer_text(budget: Budget) -> str:
    """The budget footer announcing T message rounds and C searches."""
    return _BUDGET_FOOTER_TEMPLATE.format(
        max_steps=budget.max_steps, max_search_calls=budget.max_search_calls
    )


@dataclass(frozen=True)
class RuntimeProtocols:
    """Which runtime protocols are appended to the rendered template, in a fixed order."""

    reflection: bool = False
    belief: bool = False
    budget: Budget | None = None

    @classmethod
    def none(cls) -> RuntimeProtocols:
        """No protocols: the bare template rendering."""
        return cls()

    @classmethod
    def default(cls, max_steps: int, max_search_calls: int) -> RuntimeProtocols:
        """The paper's run: budget footer and reflection scaffold, belief block off."""
        return cls(reflection=True, budget=Budget(max_steps, max_search_calls))

    @classmethod
    def all(cls, max_steps: int, max_search_calls: int) -> RuntimeProtocols:
        """Every protocol: reflection scaffold, belief block and budget footer."""
        return cls(reflection=True, belief=True, budget=Budget(max_steps, max_search_calls))

    @classmethod
    def from_settings(cls, react: ReactSettings) -> RuntimeProtocols:
        """The protocols a run's ``ReactSettings`` switch on."""
        budget = Budget(react.max_steps, react.max_search_calls) if react.budget_footer else None
        return cls(reflection=react.reflection_protocol, belief=react.belief_protocol, budget=budget)

    @property
    def reflection_text(self) -> str | None:
        """The reflection scaffold text, or None when off."""
        return REFLECTION_PROTOCOL_TEXT if self.reflection else None

    @property
    def belief_text(self) -> str | None:
        """The belief-block request text, or None when off."""
        return BELIEF_PROTOCOL_TEXT if self.belief else None

    @property
    def budget_footer_text(self) -> str | None:
        """The budget footer text, or None when off."""
        return budget_footer_text(self.budget) if self.budget is not None else None

    def blocks(self) -> list[str]:
        """The enabled protocol texts in append order: reflection, belief, budget footer."""
        # The footer goes last so the budget is the final thing the model reads.
        texts = (self.reflection_text, self.belief_text, self.budget_footer_text)
        return [text for text in texts if text is not None]

    def fingerprints(self) -> dict[str, str | None]:
        """sha256-16 of each protocol text (None when off), keyed as in ``run_meta``."""
        return {
            "reflection_protocol_hash": _fingerprint(self.reflection_text),
            "belief_protocol_hash": _fingerprint(self.belief_text),
            "budget_footer_hash": _fingerprint(self.budget_footer_text),
        }


def _fingerprint(text: str | None) -> str | None:
    return None if text is None else sha256_16(text)
