"""Typed, immutable records of the dataset layer (paper Tables 8 and 9)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

ChoiceType = Literal["single", "multi"]
QuestionType = Literal["yes_no", "binary_named", "multiple_choice"]

CHOICE_TYPES: tuple[ChoiceType, ...] = ("single", "multi")
QUESTION_TYPES: tuple[QuestionType, ...] = ("yes_no", "binary_named", "multiple_choice")

#: The eight ``prompt_reconstruction`` keys the renderer requires (paper Table 9).
TEMPLATE_KEYS: tuple[str, ...] = (
    "agent_role",
    "guidance",
    "prompt_template",
    "outcomes_block_rule",
    "yes_no_output_format",
    "binary_named_output_format",
    "multiple_choice_single_output_format",
    "multiple_choice_multi_output_format",
)


def letter(index: int) -> str:
    """Answer letter of option ``index`` as the dataset card defines it: ``chr(65 + i)``.

    Index 26 is ``[``, 27 is ``\\``, … 32 is ``a`` — the card's encoding for > 26 options.
    """
    if index < 0 or 65 + index > 0x10FFFF:
        raise ValueError(f"option index out of range: {index}")
    return chr(65 + index)


def letter_index(token: str) -> int:
    """Inverse of :func:`letter`; raises ``ValueError`` for a token that is not one char."""
    if len(token) != 1:
        raise ValueError(f"not a single-character answer letter: {token!r}")
    index = ord(token) - 65
    if index < 0:
        raise ValueError(f"not an answer letter: {token!r}")
    return index


@dataclass(frozen=True)
class Question:
    """One forecasting question: the seven columns of the paper's Table 8, typed."""

    id: str
    choice_type: ChoiceType
    question_type: QuestionType
    event: str
    options: tuple[str, ...]
    answer: frozenset[str]
    end_time: date

    @property
    def letters(self) -> tuple[str, ...]:
        """The candidate letters, in option order."""
        return tuple(letter(i) for i in range(len(self.options)))

    @property
    def k(self) -> int:
        """Number of options."""
        return len(self.options)

    @property
    def bucket(self) -> str:
        """Scoring bucket: ``yes_no``, ``binary``, ``mc_single`` or ``mc_multi``."""
        if self.question_type == "yes_no":
            return "yes_no"
        if self.question_type == "binary_named":
            return "binary"
        return "mc_single" if self.choice_type == "single" else "mc_multi"

    @property
    def answer_text(self) -> str:
        """The answer in the dataset's column form, e.g. ``"A"`` or ``"A, C"``."""
        return ", ".join(sorted(self.answer, key=letter_index))


@dataclass(frozen=True)
class PromptTemplates:
    """The ``prompt_reconstruction`` mapping: the eight required keys plus any extras."""

    values: tuple[tuple[str, str], ...]

    @classmethod
    def from_mapping(cls, mapping: dict[str, str]) -> PromptTemplates:
        """Build from a mapping (kept sorted by key so equality is order-free)."""
        return cls(tuple(sorted(mapping.items())))

    def as_dict(self) -> dict[str, str]:
        """The mapping as a plain dict."""
        return dict(self.values)

    def __getitem__(self, key: str) -> str:
        return self.as_dict()[key]
