"""``QUESTION_LIMIT`` (``--limit N``): the first N questions, in run order, some model admits.

Applied where the question filters are (``identity.resolve_identity``), so a limited run's manifest
lists exactly its questions (``filters.question_ids``) and a resume compares them like any other
question selection: a run started with ``--limit 5`` is resumed with ``--limit 5``; ``--limit 10``
is another run (docs/design/architecture.md, "Plan and cap spend before a run").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

from oracleproto.dataset.admission import admissible
from oracleproto.dataset.models import Question


def limit_questions(
    questions: Sequence[Question],
    *,
    limit: int | None,
    training_cutoffs: Mapping[str, date],
    delta_days: int,
) -> tuple[Question, ...]:
    """The first ``limit`` questions admitted for at least one model (all when ``limit`` is None).

    A question no model admits costs nothing and is skipped rather than counted, so ``--limit N``
    asks N questions of some model whenever the dataset has that many.
    """
    if limit is None:
        return tuple(questions)
    chosen: list[Question] = []
    for question in questions:
        if len(chosen) >= limit:
            break
        if any(
            admissible(question, cutoff, delta_days=delta_days).admitted
            for cutoff in training_cutoffs.values()
        ):
            chosen.append(question)
    return tuple(chosen)
