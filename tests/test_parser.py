"""Parser Ψ: Algorithm 2 branch by branch, the belief block, and the golden corpus verdicts."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from oracleproto.dataset.models import ChoiceType, Question, QuestionType
from oracleproto.parser import (
    PROBABILITY_EPSILON,
    Belief,
    clip_probability,
    last_boxed,
    parse_answer,
    parse_belief,
)

CORPUS = Path(__file__).resolve().parent / "data" / "parser_corpus.jsonl"


def _question(
    question_type: QuestionType, choice_type: ChoiceType = "single", options: tuple[str, ...] = ("Yes", "No")
) -> Question:
    return Question(
        id="q",
        choice_type=choice_type,
        question_type=question_type,
        event="fictional test event",
        options=options,
        answer=frozenset({"A"}),
        end_time=date(2030, 1, 1),
    )


YES_NO = _question("yes_no")
NAMED = _question("binary_named", options=("Red Team", "Blue Team"))
MC4 = _question("multiple_choice", options=("w", "x", "y", "z"))
MC4_MULTI = _question("multiple_choice", "multi", options=("w", "x", "y", "z"))


def _corpus() -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows


# --- boxed extraction ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "payload"),
    [
        (r"\boxed{A}", "A"),
        (r"\boxed{  A  }", "A"),
        (r"\boxed{\text{Yes}}", r"\text{Yes}"),
        (r"\boxed{{a}{b}}", "{a}{b}"),
        (r"first \boxed{A} then \boxed{B}", "B"),
        (r"\boxed {C}", "C"),
        (r"\boxed{}", ""),
        (r"no box at all", None),
        (r"\boxed{unclosed", None),
        (r"\boxed{A} and \boxed{unclosed", "A"),
    ],
)
def test_last_boxed(text: str, payload: str | None) -> None:
    assert last_boxed(text) == payload


# --- Algorithm 2 branches -----------------------------------------------------------------


def test_yes_no_branch() -> None:
    assert parse_answer(r"\boxed{Yes}", YES_NO) == {"A"}
    assert parse_answer(r"\boxed{NO}", YES_NO) == {"B"}
    assert parse_answer(r"\boxed{yes.}", YES_NO) is None
    assert parse_answer(r"\boxed{A}", YES_NO) is None


def test_binary_named_matches_label_after_strip_and_case_fold() -> None:
    assert parse_answer(r"\boxed{blue team}", NAMED) == {"B"}
    assert parse_answer(r"\boxed{ RED TEAM }", NAMED) == {"A"}
    assert parse_answer(r"\boxed{Blue}", NAMED) is None
    assert parse_answer(r"\boxed{B}", NAMED) is None


def test_binary_named_strips_the_option_label() -> None:
    padded = _question("binary_named", options=("  Alpha ", "Beta"))
    assert parse_answer(r"\boxed{alpha}", padded) == {"A"}


def test_multiple_choice_single_and_multi() -> None:
    assert parse_answer(r"\boxed{C}", MC4) == {"C"}
    assert parse_answer(r"\boxed{A, C}", MC4_MULTI) == {"A", "C"}
    assert parse_answer(r"\boxed{A C,D}", MC4_MULTI) == {"A", "C", "D"}
    assert parse_answer(r"\boxed{E}", MC4) is None
    assert parse_answer(r"\boxed{AB}", MC4_MULTI) is None
    assert parse_answer(r"\boxed{ , }", MC4_MULTI) is None


def test_structural_violation_several_letters_on_single_answer_is_invalid() -> None:
    assert parse_answer(r"\boxed{A, B}", MC4) is None


def test_duplicate_letters_collapse_to_a_set() -> None:
    assert parse_answer(r"\boxed{A, A}", MC4) == {"A"}
    assert parse_answer(r"\boxed{B,B,C}", MC4_MULTI) == {"B", "C"}


def test_letters_beyond_z_follow_the_dataset_card_encoding() -> None:
    many = _question("multiple_choice", options=tuple(f"o{i}" for i in range(28)))
    assert parse_answer(r"\boxed{[}", many) == {"["}
    assert parse_answer(r"\boxed{\}", many) == {"\\"}  # index 27; braces are not escape-aware
    assert parse_answer(r"\boxed{]}", many) is None  # index 28 is out of range for 28 options


def test_empty_box_and_no_box_are_invalid() -> None:
    assert parse_answer(r"\boxed{ }", MC4) is None
    assert parse_answer("The answer is A.", MC4) is None
    assert parse_answer("", YES_NO) is None


def test_parse_answer_never_raises_on_odd_text() -> None:
    for text in ["\\boxed{\x00}", "\\boxed{" * 50, "}}}}\\boxed", "\\boxed{\U0001f600}", "\\boxed{@}"]:
        for question in (YES_NO, NAMED, MC4, MC4_MULTI):
            assert parse_answer(text, question) is None


# --- golden corpus ------------------------------------------------------------------------


def test_corpus_is_large_and_covers_every_branch() -> None:
    rows = _corpus()
    assert len(rows) >= 150
    kinds = {(r["question_type"], r["choice_type"]) for r in rows}
    assert kinds == {
        ("yes_no", "single"),
        ("binary_named", "single"),
        ("multiple_choice", "single"),
        ("multiple_choice", "multi"),
    }
    verdicts = [r["expected"] for r in rows]
    assert None in verdicts
    assert any(v is not None and len(v) > 1 for v in verdicts)


def _corpus_verdicts() -> list[tuple[int, str, list[str] | None]]:
    out: list[tuple[int, str, list[str] | None]] = []
    for number, row in enumerate(_corpus()):
        question = _question(row["question_type"], row["choice_type"], tuple(row["options"]))
        verdict = parse_answer(row["text"], question)
        out.append((number, row["note"], None if verdict is None else sorted(verdict)))
    return out


def test_corpus_matches_hand_written_expectations() -> None:
    mismatches = []
    for (number, note, verdict), row in zip(_corpus_verdicts(), _corpus(), strict=True):
        if verdict != row["expected"]:
            mismatches.append(f"#{number} {note}: got {verdict}, expected {row['expected']}")
    assert not mismatches, "\n".join(mismatches)


def test_corpus_verdicts_snapshot(snapshot: SnapshotAssertion) -> None:
    # One readable line per corpus entry; ⊥ marks an unevaluable output.
    lines = [
        f"{number:03d} {note}: {'⊥' if verdict is None else ','.join(verdict)}"
        for number, note, verdict in _corpus_verdicts()
    ]
    assert lines == snapshot


# --- belief block -------------------------------------------------------------------------


def test_belief_single_answer_on_simplex() -> None:
    belief = parse_belief('reasoning <belief>{"A": 0.6, "B": 0.4}</belief> \\boxed{Yes}', YES_NO)
    assert belief == Belief((("A", 0.6), ("B", 0.4)), multi=False)
    assert belief.as_dict() == {"A": 0.6, "B": 0.4}


def test_belief_simplex_tolerance_is_1e_3() -> None:
    assert parse_belief('<belief>{"A": 0.6004, "B": 0.4}</belief>', YES_NO) is not None
    assert parse_belief('<belief>{"A": 0.602, "B": 0.4}</belief>', YES_NO) is None


def test_belief_multi_answer_independent_probabilities() -> None:
    text = '<belief>{"A": 0.9, "B": 0.8, "C": 0.1, "D": 0}</belief>'
    belief = parse_belief(text, MC4_MULTI)
    assert belief is not None
    assert belief.multi
    assert belief.as_dict()["D"] == 0.0
    assert parse_belief(text, MC4) is None  # the same vector is off-simplex for single answer


def test_belief_last_block_wins() -> None:
    text = '<belief>{"A": 1, "B": 0}</belief> later <belief>{"A": 0.2, "B": 0.8}</belief>'
    belief = parse_belief(text, YES_NO)
    assert belief is not None
    assert belief.as_dict() == {"A": 0.2, "B": 0.8}


@pytest.mark.parametrize(
    "block",
    [
        '{"A": 0.5, "B": 0.3, "E": 0.2}',  # unknown letter
        '{"A": 0.5, "B": 0.5}',  # missing letters C, D
        '{"A": 0.5, "B": 0.5, "C": 0, "D": 1.5}',  # out of [0, 1]
        '{"A": 0.5, "B": 0.5, "C": 0, "D": -0.0001}',
        '{"A": "0.5", "B": 0.5, "C": 0, "D": 0}',  # string
        '{"A": true, "B": 0, "C": 0, "D": 0}',  # bool
        '{"A": NaN, "B": 0, "C": 0, "D": 0}',
        "[0.25, 0.25, 0.25, 0.25]",  # not a mapping
        "{not json}",
        "",
    ],
)
def test_belief_invalid_blocks(block: str) -> None:
    assert parse_belief(f"<belief>{block}</belief>", MC4_MULTI) is None


def test_belief_absent() -> None:
    assert parse_belief(r"\boxed{A}", MC4) is None


def test_clip_probability() -> None:
    assert clip_probability(0.0) == PROBABILITY_EPSILON
    assert clip_probability(1.0) == 1.0 - PROBABILITY_EPSILON
    assert clip_probability(0.3) == 0.3
    belief = parse_belief('<belief>{"A": 1, "B": 0}</belief>', YES_NO)
    assert belief is not None
    assert belief.clipped() == {"A": 1.0 - PROBABILITY_EPSILON, "B": PROBABILITY_EPSILON}


# --- totality on arbitrary text -----------------------------------------------------------

_FRAGMENTS = ["\\boxed{", "<belief>", "</belief>", '{"A": 0.5, "B": 0.5}', "Yes", "A, B"]
_ALPHABET = st.sampled_from([*'\\{}<>"AaBbCcDE, \n:0.5[]-', *_FRAGMENTS])


@settings(derandomize=True, database=None, max_examples=300)
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_parsers_are_total_on_arbitrary_text(text: str) -> None:
    for question in (YES_NO, NAMED, MC4, MC4_MULTI):
        verdict = parse_answer(text, question)
        assert verdict is None or (verdict and verdict <= set(question.letters))
        belief = parse_belief(text, question)
        assert belief is None or {k for k, _ in belief.probabilities} == set(question.letters)
