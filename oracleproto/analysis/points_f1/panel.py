"""The population points-f1 scores and each model's trials on it, from what the reader read.

A question leaves the population when the training cutoff (or δ = 0) excluded it for any model:
the headline population is the intersection of the questions every model of the run was admitted
to, so every model is scored on the same questions and the bootstrap pairs them. On it, each
trial is one of: an answer (a parsed letter set), ⊥ (no valid boxed set), a content-policy
refusal, a missing slot (never written) or an infrastructure error (any other call error). The
last two make the question incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple

import numpy as np

from oracleproto.analysis.reader import RunData
from oracleproto.analysis.trials import TrialState, TrialTable
from oracleproto.errors import AnalysisError, ErrorKind

#: Trial counters averaged into ``mean_*`` columns: summary column suffix → TrialTable field.
COUNTERS: dict[str, str] = {
    "tool_calls_count": "tool_calls",
    "react_steps": "react_steps",
    "latency_ms": "latency_ms",
    "prompt_tokens": "prompt_tokens",
    "completion_tokens": "completion_tokens",
    "reasoning_tokens": "reasoning_tokens",
}


class Outcome(StrEnum):
    """What one trial of a population question is, for points-f1."""

    ANSWER = "answer"
    UNPARSED = "unparsed"  # ⊥: answered without a valid boxed letter set
    REFUSAL = "refusal"  # the provider's content-policy refusal
    MISSING = "missing"  # slot never written (an unfinished run)
    INFRASTRUCTURE = "infrastructure"  # any other call error (network, rate limit, 5xx, …)

    @property
    def scored(self) -> bool:
        """Whether the trial is scored (with credit 0 unless it is an answer)."""
        return self in (Outcome.ANSWER, Outcome.UNPARSED, Outcome.REFUSAL)


class Trial(NamedTuple):
    """One trial: its outcome and, for an answer, the letter set as a bit mask (bit i = letter i)."""

    outcome: Outcome
    letters: int | None = None
    #: The stored error kind of an infrastructure error (for the reason a question is incomplete).
    error: str | None = None


@dataclass(frozen=True)
class Question:
    """A population question: id, bucket index (``trials.BUCKETS``), option count, gold mask."""

    id: str
    bucket: int
    options: int
    gold: int


@dataclass(frozen=True)
class Panel:
    """The population and every model's K trials on each of its questions."""

    models: tuple[str, ...]
    n: int
    questions: tuple[Question, ...]
    #: Model → one tuple of K trials per population question (``questions`` order).
    trials: dict[str, tuple[tuple[Trial, ...], ...]]
    #: Model → counter suffix → (sum, written slots) over the population's written slots.
    counters: dict[str, dict[str, tuple[int, int]]]
    #: Model → questions it was admitted to (not excluded), on or off the population.
    admitted: dict[str, int]


def _mask(row: np.ndarray) -> int:
    return sum(1 << int(i) for i in np.flatnonzero(row))


def _trial(t: TrialTable, q: int, j: int) -> Trial:
    state = int(t.state[q, j])
    if state == TrialState.PARSED:
        return Trial(Outcome.ANSWER, _mask(t.pred[q, j]))
    if state == TrialState.PARSE_FAIL:
        return Trial(Outcome.UNPARSED)
    if state == TrialState.EMPTY:
        return Trial(Outcome.MISSING)
    kind = t.error_kind[q][j] if t.error_kind else None
    if kind == ErrorKind.CONTENT_POLICY:
        return Trial(Outcome.REFUSAL)
    return Trial(Outcome.INFRASTRUCTURE, error=kind)


def admitted_ids(t: TrialTable) -> set[str]:
    """Questions of ``t`` no slot of which was excluded (cutoff or δ = 0)."""
    excluded = {int(i) for i in np.flatnonzero(np.asarray(t.state == TrialState.EXCLUDED).any(axis=1))}
    return {qid for i, qid in enumerate(t.question_ids) if i not in excluded}


def build_panel(run: RunData) -> Panel:
    """The population of ``run`` and each model's trials on it (plan order of models)."""
    ns = {m.slug: m.table.n for m in run.models}
    if len(set(ns.values())) > 1:
        shown = ", ".join(f"{slug}: {n}" for slug, n in ns.items())
        raise AnalysisError(
            f"points-f1 compares models over the same number of samples per question; this run has {shown}"
        )
    admitted = {m.slug: admitted_ids(m.table) for m in run.models}
    population = sorted(set.intersection(*admitted.values()))
    questions = _questions(run, population)
    trials: dict[str, tuple[tuple[Trial, ...], ...]] = {}
    counters: dict[str, dict[str, tuple[int, int]]] = {}
    for m in run.models:
        t = m.table
        where = {qid: i for i, qid in enumerate(t.question_ids)}
        rows = [where[q.id] for q in questions]
        trials[m.slug] = tuple(tuple(_trial(t, q, j) for j in range(t.n)) for q in rows)
        written = np.asarray(t.populated[rows]) if rows else np.zeros((0, t.n), dtype=bool)
        counters[m.slug] = {
            name: (int(np.asarray(getattr(t, field))[rows][written].sum()), int(written.sum()))
            for name, field in COUNTERS.items()
        }
    return Panel(
        models=tuple(m.slug for m in run.models),
        n=next(iter(ns.values())),
        questions=questions,
        trials=trials,
        counters=counters,
        admitted={slug: len(ids) for slug, ids in admitted.items()},
    )


def _questions(run: RunData, population: list[str]) -> tuple[Question, ...]:
    """The population's questions, checked to be the same question in every model's DB."""
    out: list[Question] = []
    where = {m.slug: {qid: i for i, qid in enumerate(m.table.question_ids)} for m in run.models}
    for qid in population:
        seen: dict[Question, str] = {}
        for m in run.models:
            t = m.table
            i = where[m.slug][qid]
            question = Question(qid, int(t.bucket[i]), int(t.k[i]), _mask(t.gold[i]))
            seen.setdefault(question, m.slug)
        if len(seen) > 1:
            shown = "; ".join(
                f"{slug}: bucket {q.bucket}, {q.options} options, gold mask {q.gold}"
                for q, slug in seen.items()
            )
            raise AnalysisError(
                f"question {qid!r} differs between the models' databases ({shown}): "
                "points-f1 pairs models on the same questions; re-run them from one source DB"
            )
        out.append(next(iter(seen)))
    return tuple(out)
