"""``--select model=…,question=…,sample=…,channel=…``: which calls a partial refresh re-records.

One ``--select`` value is a clause: its terms are AND-ed, repeated keys inside it OR-ed
(``question=q1,question=q2``). Several ``--select`` options are OR-ed. A model term matches
the virtual slug exactly or its real slug (the slug without ``::rR::cC``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from oracleproto.errors import ConfigError
from oracleproto.transport.keys import CHANNELS, Channel

KEYS = ("model", "question", "sample", "channel")


@dataclass(frozen=True)
class Clause:
    """One ``--select`` value: allowed values per key (a missing key allows everything)."""

    terms: dict[str, frozenset[str]]

    def matches(self, channel: Channel, ctx: dict[str, Any] | None) -> bool:
        """True when every term of the clause accepts this call."""
        if "channel" in self.terms and channel not in self.terms["channel"]:
            return False
        trajectory_terms = [k for k in ("model", "question", "sample") if k in self.terms]
        if not trajectory_terms:
            return True
        if ctx is None:
            return False
        model = str(ctx["model"])
        if "model" in self.terms and not {model, model.split("::", 1)[0]} & self.terms["model"]:
            return False
        if "question" in self.terms and str(ctx["question_id"]) not in self.terms["question"]:
            return False
        return "sample" not in self.terms or str(ctx["sample"]) in self.terms["sample"]

    def describe(self) -> str:
        """The clause as the user would write it (keys in a fixed order)."""
        return ",".join(f"{k}={v}" for k in KEYS for v in sorted(self.terms.get(k, ())))


@dataclass(frozen=True)
class Selector:
    """OR of clauses; an empty selector selects every call (a full refresh)."""

    clauses: tuple[Clause, ...] = ()

    def __call__(self, channel: Channel, ctx: dict[str, Any] | None) -> bool:
        """The ``should_refresh`` predicate of ``RecordReplay``."""
        return not self.clauses or any(c.matches(channel, ctx) for c in self.clauses)

    @property
    def full(self) -> bool:
        """True when nothing is restricted."""
        return not self.clauses

    def describe(self) -> list[str]:
        """Each clause as text (empty list for a full refresh)."""
        return [c.describe() for c in self.clauses]

    def check_against(self, models: Iterable[str], questions: Iterable[str]) -> None:
        """Refuse model/question terms that name nothing in the run being refreshed."""
        model_names = {m for slug in models for m in (slug, slug.split("::", 1)[0])}
        question_ids = set(questions)
        for clause in self.clauses:
            unknown_models = sorted(clause.terms.get("model", frozenset()) - model_names)
            unknown_questions = sorted(clause.terms.get("question", frozenset()) - question_ids)
            if unknown_models:
                raise ConfigError(
                    f"--select {clause.describe()}: model {', '.join(unknown_models)} is not in the run "
                    f"(models: {', '.join(sorted(model_names))})"
                )
            if unknown_questions:
                raise ConfigError(
                    f"--select {clause.describe()}: question {', '.join(unknown_questions)} is not in "
                    "the run; use question ids as stored in the run's databases"
                )


def parse_clause(text: str) -> Clause:
    """Parse one ``key=value,key=value`` clause; raises ``ConfigError`` naming the bad term."""
    terms: dict[str, set[str]] = {}
    for raw in text.split(","):
        term = raw.strip()
        key, sep, value = term.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not value:
            raise ConfigError(
                f"--select {text!r}: term {term!r} is not key=value; e.g. model=sim/hasty,question=demo-03"
            )
        if key not in KEYS:
            raise ConfigError(f"--select {text!r}: unknown key {key!r}; use one of {', '.join(KEYS)}")
        if key == "channel" and value not in CHANNELS:
            raise ConfigError(f"--select {text!r}: channel {value!r} is not one of {', '.join(CHANNELS)}")
        if key == "sample" and not value.isdigit():
            raise ConfigError(f"--select {text!r}: sample {value!r} must be a sample index (0, 1, …)")
        terms.setdefault(key, set()).add(value)
    return Clause({k: frozenset(v) for k, v in terms.items()})


def parse_selector(values: Sequence[str]) -> Selector:
    """A selector from the ``--select`` values (none → full refresh)."""
    return Selector(tuple(parse_clause(v) for v in values))
