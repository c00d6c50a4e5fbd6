"""The trial table: one model's run as dense numpy arrays (questions × samples × letters).

Every metric works on this table, so the SQLite layout is read once and scoring is vectorised.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

#: Bucket order used by every table: yes/no, binary (named), MC-single, MC-multi.
BUCKETS: tuple[str, ...] = ("yes_no", "binary", "mc_single", "mc_multi")
YES_NO, BINARY, MC_SINGLE, MC_MULTI = 0, 1, 2, 3


class TrialState(IntEnum):
    """What happened to one (question, sample) slot."""

    EMPTY = 0  # never written (an unfinished run): ignored by every metric
    EXCLUDED = 1  # skipped_training_cutoff, or skipped_after_resolution (δ = 0)
    CALL_ERROR = 2  # any other error kind
    PARSE_FAIL = 3  # answered, but no valid boxed letter set
    PARSED = 4


@dataclass(frozen=True, eq=False)
class TrialTable:
    """One virtual model's trials; ``pred``/``gold`` are letter-indicator arrays."""

    question_ids: tuple[str, ...]
    bucket: IntArray  # (Q,) index into BUCKETS
    question_type: tuple[str, ...]  # (Q,) as stored
    k: IntArray  # (Q,) number of options
    gold: BoolArray  # (Q, L)
    state: IntArray  # (Q, n) TrialState values
    pred: BoolArray  # (Q, n, L)
    prompt_tokens: IntArray  # (Q, n)
    completion_tokens: IntArray
    reasoning_tokens: IntArray
    tool_calls: IntArray
    react_steps: IntArray
    latency_ms: IntArray
    search_calls: IntArray  # successful Tavily calls recorded in search_calls
    detector_calls: IntArray  # detector verdicts recorded in search_calls
    belief_final: tuple[tuple[Any, ...], ...] = field(default=())  # (Q, n) parsed JSON or None
    belief_trace: tuple[tuple[Any, ...], ...] = field(default=())
    #: (Q, n) the stored ``error`` kind of call-error slots, None elsewhere; empty when not read.
    #: Conventions that score a refusal (``content_policy``) unlike an outage need the kind.
    error_kind: tuple[tuple[str | None, ...], ...] = field(default=())

    @property
    def n(self) -> int:
        """Samples per question."""
        return int(self.state.shape[1])

    @property
    def n_questions(self) -> int:
        """Questions in the table."""
        return len(self.question_ids)

    @cached_property
    def multi(self) -> BoolArray:
        """(Q,) multi-answer (MC-multi) questions."""
        return np.asarray(self.bucket == MC_MULTI)

    @cached_property
    def m(self) -> IntArray:
        """(Q,) gold set sizes."""
        return np.asarray(self.gold.sum(axis=1), dtype=np.int64)

    @cached_property
    def label_valid(self) -> BoolArray:
        """(Q, L) letters that exist for the question."""
        return np.asarray(np.arange(self.gold.shape[1])[None, :] < self.k[:, None])

    @cached_property
    def parsed(self) -> BoolArray:
        """(Q, n) parsed trials (J^ok)."""
        return np.asarray(self.state == TrialState.PARSED)

    @cached_property
    def counted(self) -> BoolArray:
        """(Q, n) trials that are neither excluded nor call errors (J^cnt)."""
        return np.asarray((self.state == TrialState.PARSED) | (self.state == TrialState.PARSE_FAIL))

    @cached_property
    def call_error(self) -> BoolArray:
        """(Q, n) call-error trials."""
        return np.asarray(self.state == TrialState.CALL_ERROR)

    @cached_property
    def eligible(self) -> BoolArray:
        """(Q, n) populated, non-excluded trials (counted or call error)."""
        return np.asarray(self.counted | self.call_error)

    @cached_property
    def populated(self) -> BoolArray:
        """(Q, n) slots that were written."""
        return np.asarray(self.state != TrialState.EMPTY)

    @cached_property
    def tp(self) -> IntArray:
        """(Q, n) |pred ∩ gold| (0 for unparsed trials)."""
        return np.asarray((self.pred & self.gold[:, None, :]).sum(axis=2), dtype=np.int64)

    @cached_property
    def fp(self) -> IntArray:
        """(Q, n) |pred \\ gold|."""
        return np.asarray((self.pred & ~self.gold[:, None, :]).sum(axis=2), dtype=np.int64)

    @cached_property
    def fn(self) -> IntArray:
        """(Q, n) |gold \\ pred|."""
        return np.asarray(self.m[:, None] - self.tp, dtype=np.int64)

    @cached_property
    def correct(self) -> BoolArray:
        """(Q, n) strict set equality c_{q,j}; False for unparsed trials."""
        return np.asarray(self.parsed & (self.fp == 0) & (self.fn == 0))

    @cached_property
    def exam(self) -> FloatArray:
        """(Q, n) exam score (Eq. exam-score); 0 for parse failures and unparsed slots."""
        ok = self.parsed & (self.fp == 0)
        return np.where(ok, self.tp / np.maximum(self.m, 1)[:, None], 0.0)

    @cached_property
    def set_code(self) -> IntArray:
        """(Q, n) the parsed letter set as a bit mask (category for votes); -1 when unparsed."""
        weights = np.left_shift(np.int64(1), np.arange(self.pred.shape[2], dtype=np.int64))
        codes = (self.pred.astype(np.int64) * weights).sum(axis=2)
        return np.where(self.parsed, codes, -1)

    @cached_property
    def first_letter_code(self) -> IntArray:
        """(Q, n) index of the first (sorted) parsed letter; -1 when unparsed."""
        return np.where(self.parsed, np.argmax(self.pred, axis=2), -1)

    @cached_property
    def gold_code(self) -> IntArray:
        """(Q,) the gold set as a bit mask."""
        weights = np.left_shift(np.int64(1), np.arange(self.gold.shape[1], dtype=np.int64))
        return np.asarray((self.gold.astype(np.int64) * weights).sum(axis=1), dtype=np.int64)
