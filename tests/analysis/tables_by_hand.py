"""Small TrialTables written out by hand, for metric tests whose expected values are worked on paper."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from oracleproto.analysis.trials import BUCKETS, TrialState, TrialTable

#: A trial: letters like "A" or "A,C" (parsed), or one of these markers.
FAIL, ERR, CUT = "<fail>", "<error>", "<cut>"


def letters_row(letters: str, width: int) -> list[bool]:
    chosen = {part.strip() for part in letters.split(",") if part.strip()}
    return [chr(65 + i) in chosen for i in range(width)]


def table(
    questions: Sequence[tuple[str, int, str]],
    trials: Sequence[Sequence[str]],
    *,
    width: int = 5,
    counters: dict[str, Sequence[Sequence[int]]] | None = None,
    belief_final: Sequence[Sequence[Any]] = (),
    belief_trace: Sequence[Sequence[Any]] = (),
) -> TrialTable:
    """``questions``: (bucket name, k, gold letters) each; ``trials``: per question, one entry a sample."""
    q_count, n = len(questions), len(trials[0])
    state = np.zeros((q_count, n), dtype=np.int64)
    pred = np.zeros((q_count, n, width), dtype=bool)
    for q, row in enumerate(trials):
        for j, trial in enumerate(row):
            if trial == FAIL:
                state[q, j] = TrialState.PARSE_FAIL
            elif trial == ERR:
                state[q, j] = TrialState.CALL_ERROR
            elif trial == CUT:
                state[q, j] = TrialState.EXCLUDED
            else:
                state[q, j] = TrialState.PARSED
                pred[q, j] = letters_row(trial, width)
    zeros = np.zeros((q_count, n), dtype=np.int64)
    given = {name: np.asarray(v, dtype=np.int64) for name, v in (counters or {}).items()}
    return TrialTable(
        question_ids=tuple(f"q{i}" for i in range(q_count)),
        bucket=np.asarray([BUCKETS.index(b) for b, _, _ in questions], dtype=np.int64),
        question_type=tuple("multiple_choice" if b.startswith("mc") else b for b, _, _ in questions),
        k=np.asarray([k for _, k, _ in questions], dtype=np.int64),
        gold=np.asarray([letters_row(g, width) for _, _, g in questions], dtype=bool),
        state=state,
        pred=pred,
        prompt_tokens=given.get("prompt_tokens", zeros),
        completion_tokens=given.get("completion_tokens", zeros),
        reasoning_tokens=given.get("reasoning_tokens", zeros),
        tool_calls=given.get("tool_calls", zeros),
        react_steps=given.get("react_steps", zeros),
        latency_ms=given.get("latency_ms", zeros),
        search_calls=given.get("search_calls", zeros),
        detector_calls=given.get("detector_calls", zeros),
        belief_final=tuple(tuple(row) for row in belief_final),
        belief_trace=tuple(tuple(row) for row in belief_trace),
    )
