"""Parser Ψ: the boxed answer (paper Algorithm 2) and the ``<belief>`` block (App. B.9 family B).

Both parsers are total: bad model text yields ``None`` (the unevaluable marker ⊥), never an
exception, because validity is a reported metric rather than a failure of the run. The boxed
answer has two modes (``ANSWER_PARSER``): ``algorithm2``, the paper's procedure, and ``strict``,
which also rejects several letters on a single-answer question.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from oracleproto.dataset.models import Question, letter, letter_index
from oracleproto.settings.model import AnswerParser

#: ε of the probabilistic family: probabilities are clipped to [ε, 1 − ε] before any log.
PROBABILITY_EPSILON = 1e-3
#: Tolerance of the single-answer simplex constraint Σ p = 1.
SIMPLEX_TOLERANCE = 1e-3

_BOXED = re.compile(r"\\boxed\s*\{")
_MC_SPLIT = re.compile(r"[\s,]+")
_BELIEF = re.compile(r"<belief>(.*?)</belief>", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Belief:
    """A parsed belief vector: letter → probability, over every option letter of the question."""

    probabilities: tuple[tuple[str, float], ...]
    multi: bool

    def as_dict(self) -> dict[str, float]:
        """The vector as a plain dict (option order)."""
        return dict(self.probabilities)

    def clipped(self) -> dict[str, float]:
        """The vector with every probability clipped to [ε, 1 − ε], ready for logs."""
        return {k: clip_probability(p) for k, p in self.probabilities}


def clip_probability(p: float) -> float:
    """Clip ``p`` to [1e-3, 1 − 1e-3], the paper's guard applied before any logarithm."""
    return min(max(p, PROBABILITY_EPSILON), 1.0 - PROBABILITY_EPSILON)


def _boxed_payloads(text: str) -> list[str]:
    """Payloads of every brace-balanced ``\\boxed{...}`` in order; unclosed boxes are skipped."""
    payloads: list[str] = []
    pos = 0
    while True:
        match = _BOXED.search(text, pos)
        if match is None:
            return payloads
        depth = 1
        i = match.end()
        while i < len(text) and depth:
            char = text[i]
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
            i += 1
        if depth:
            # An unclosed box is not a match; a later well-formed box can still win.
            pos = match.end()
            continue
        payloads.append(text[match.end() : i - 1])
        pos = i


def last_boxed(text: str) -> str | None:
    """Whitespace-stripped payload of the last ``\\boxed{...}`` in ``text``; None without one."""
    payloads = _boxed_payloads(text)
    return payloads[-1].strip() if payloads else None


def _parse_yes_no(payload: str) -> frozenset[str] | None:
    lowered = payload.lower()
    if lowered == "yes":
        return frozenset({"A"})
    if lowered == "no":
        return frozenset({"B"})
    return None


def _parse_binary_named(payload: str, options: tuple[str, ...]) -> frozenset[str] | None:
    lowered = payload.lower()
    for index, label in enumerate(options):
        if label.strip().lower() == lowered:
            return frozenset({letter(index)})
    return None


def _parse_multiple_choice(payload: str, question: Question, mode: AnswerParser) -> frozenset[str] | None:
    tokens = [t for t in _MC_SPLIT.split(payload) if t]
    if not tokens:
        return None
    for token in tokens:
        if len(token) != 1:
            return None
        try:
            index = letter_index(token)
        except ValueError:
            return None
        if index >= len(question.options):
            return None
    letters = frozenset(tokens)
    # Algorithm 2 returns the set as it is: a hedge on a single-answer question is then a wrong
    # answer (set equality fails, exam score 0). Strict mode files it under ⊥ instead, which lets
    # the ReAct loop ask for another turn.
    if mode == "strict" and question.choice_type == "single" and len(letters) != 1:
        return None
    return letters


def parse_answer(text: str, question: Question, *, mode: AnswerParser) -> frozenset[str] | None:
    """Letter set of the last ``\\boxed{...}`` in ``text`` under ``mode``, or None (⊥)."""
    payload = last_boxed(text)
    if not payload:
        return None
    if question.question_type == "yes_no":
        return _parse_yes_no(payload)
    if question.question_type == "binary_named":
        return _parse_binary_named(payload, question.options)
    if question.question_type == "multiple_choice":
        return _parse_multiple_choice(payload, question, mode)
    return None


def _as_probability(value: object) -> float | None:
    # bool is an int subclass; `true` is not a probability.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if not math.isfinite(number) or number < 0.0 or number > 1.0:
        return None
    return number


def parse_belief(text: str, question: Question) -> Belief | None:
    """Belief vector of the last ``<belief>{...}</belief>`` block in ``text``, or None if invalid.

    The block is a JSON object mapping every option letter to a probability. Single-answer
    questions must lie on the simplex within 1e-3; multi-answer questions carry independent
    probabilities in [0, 1]. Missing or unknown letters invalidate the block.
    """
    blocks = _BELIEF.findall(text)
    if not blocks:
        return None
    try:
        data = json.loads(blocks[-1].strip())
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    letters = question.letters
    if set(data) != set(letters):
        return None
    probabilities: list[tuple[str, float]] = []
    for key in letters:
        number = _as_probability(data[key])
        if number is None:
            return None
        probabilities.append((key, number))
    multi = question.choice_type == "multi"
    if not multi and abs(sum(p for _, p in probabilities) - 1.0) > SIMPLEX_TOLERANCE:
        return None
    return Belief(tuple(probabilities), multi)
