"""Property: any FutureX-shaped record with distinct labels round-trips to its gold letters."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.dataset.importers import futurex
from oracleproto.dataset.importers.records import Candidate
from oracleproto.dataset.models import letter
from oracleproto.dataset.validation import validate_rows
from oracleproto.scoring.parser import parse_answer

# Labels of two or more characters: a one-character label is ambiguous with a letter (letters win).
_WORDS = (
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", min_size=2, max_size=12)
    .map(str.strip)
    .filter(lambda s: len(s) > 1)
)


@st.composite
def records(draw: st.DrawFn) -> tuple[dict[str, object], list[str]]:
    labels = draw(st.lists(_WORDS.map(str.title), min_size=2, max_size=40, unique_by=str.casefold))
    chosen = draw(st.lists(st.integers(0, len(labels) - 1), min_size=1, max_size=4, unique=True))
    as_text = draw(st.booleans())  # ground truth as option texts instead of letters
    truth = [labels[i] if as_text else letter(i) for i in chosen]
    encoding = draw(st.sampled_from(["python", "json-quoted", "list"]))
    ground_truth: object = {"python": repr(truth), "json-quoted": f'"{truth!r}"', "list": truth}[encoding]
    lines = "\n".join(f"{letter(i)}. {label}" for i, label in enumerate(labels))
    prompt = (
        f'The event to be predicted: "[Fictional] Which? (resolved around 2031-01-02 (GMT+8))."\n{lines}\n'
    )
    prompt += "        IMPORTANT: end with \\boxed{YOUR_PREDICTION}\n"
    record = {"id": "p-1", "level": 2, "end_time": "2031-01-02 08:00:00", "title": "", "prompt": prompt}
    record["ground_truth"] = ground_truth
    return record, sorted({letter(i) for i in chosen}, key=ord)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(records())
def test_collapse_validate_parse_round_trip(case: tuple[dict[str, object], list[str]]) -> None:
    record, gold = case
    candidate = futurex.collapse(record, 0, futurex.DEFAULT_LEVELS)
    assert isinstance(candidate, Candidate), candidate
    (question,), problems = validate_rows([candidate.as_row()])
    assert problems == []
    assert sorted(question.answer, key=ord) == gold
    assert question.event == "[Fictional] Which?"
    reply = f"\\boxed{{{question.answer_text}}}"
    assert parse_answer(reply, question, mode="algorithm2") == question.answer
