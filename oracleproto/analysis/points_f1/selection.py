"""MC-multi selection diagnostics: how a model's valid multi-answer sets miss the gold set.

Conditional on valid answers (⊥ and refusals have no letter set to describe), so the output
carries its own denominators: the multi slots, the valid ones and the questions they cover. Each
field is a question mean over that question's valid trials, then a plain mean over the questions
that have a value (the false-positive rate is undefined when every option is gold).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from oracleproto.analysis.points_f1.panel import Outcome, Question, Trial
from oracleproto.analysis.rational import mean
from oracleproto.analysis.trials import MC_MULTI

FIELDS = (
    "precision",
    "recall",
    "f1",
    "false_positive_rate",
    "false_negative_rate",
    "extra_count",
    "missed_count",
    "cardinality_bias",
    "overselect",
    "underselect",
    "same_size_wrong",
    "exact",
    "omission_only",
    "commission_only",
    "mixed_error",
)


def trial_diagnostics(letters: int, gold: int, options: int) -> dict[str, Fraction | None]:
    """Every field for one valid answer (bit masks); ``false_positive_rate`` None without non-gold options."""
    tp, fp, fn = (letters & gold).bit_count(), (letters & ~gold).bit_count(), (gold & ~letters).bit_count()
    size, gold_size = letters.bit_count(), gold.bit_count()
    negatives = options - gold_size
    return {
        "precision": Fraction(tp, size),
        "recall": Fraction(tp, gold_size),
        "f1": Fraction(2 * tp, size + gold_size),
        "false_positive_rate": Fraction(fp, negatives) if negatives else None,
        "false_negative_rate": Fraction(fn, gold_size),
        "extra_count": Fraction(fp),
        "missed_count": Fraction(fn),
        "cardinality_bias": Fraction(size - gold_size),
        "overselect": Fraction(int(size > gold_size)),
        "underselect": Fraction(int(size < gold_size)),
        "same_size_wrong": Fraction(int(size == gold_size and letters != gold)),
        "exact": Fraction(int(fp == 0 and fn == 0)),
        "omission_only": Fraction(int(fp == 0 and fn > 0)),
        "commission_only": Fraction(int(fp > 0 and fn == 0)),
        "mixed_error": Fraction(int(fp > 0 and fn > 0)),
    }


def selection_diagnostics(questions: Sequence[Question], trials: Sequence[Sequence[Trial]]) -> dict[str, Any]:
    """The diagnostics of one model over the population's MC-multi questions."""
    multi = [(q, ts) for q, ts in zip(questions, trials, strict=True) if q.bucket == MC_MULTI]
    slots = sum(len(ts) for _, ts in multi)
    per_question: list[list[dict[str, Fraction | None]]] = []
    for q, ts in multi:
        rows = [
            trial_diagnostics(t.letters, q.gold, q.options)
            for t in ts
            if t.outcome is Outcome.ANSWER and t.letters is not None
        ]
        if rows:
            per_question.append(rows)
    valid = sum(len(rows) for rows in per_question)
    out: dict[str, Any] = {
        "multi_slots": slots,
        "valid_multi_slots": valid,
        "valid_multi_questions": len(per_question),
        "valid_multi_rate": Fraction(valid, slots) if slots else None,
        "fpr_questions": sum(
            any(r["false_positive_rate"] is not None for r in rows) for rows in per_question
        ),
        "select_all_f1": mean(
            [Fraction(2 * q.gold.bit_count(), q.options + q.gold.bit_count()) for q, _ in multi]
        ),
    }
    for name in FIELDS:
        question_means = [mean([v for r in rows if (v := r[name]) is not None]) for rows in per_question]
        out[name] = mean([m for m in question_means if m is not None])
    return out
