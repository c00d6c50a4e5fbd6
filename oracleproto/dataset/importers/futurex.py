"""FutureX-Past importer: Parquet shards or JSON/JSONL exports → collapsed candidate rows.

Facts of the release this handles (see docs/design/datasets-and-providers.md, "Dataset importers"):
option labels run
``chr(65 + i)`` past ``Z`` (``[ \\ ] ^ _`` and a backtick); ``ground_truth`` is a list, a
Python-list string (``"['A', 'C']"``), a JSON string or an option text; ``end_time`` is a date,
a datetime or ``YYYY/M/D``; an indented instruction block follows the options; levels 3-4 are
open-ended or numeric; the last option line carries the closing quote of the prompt's
``The event to be predicted: "…"`` frame.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

from oracleproto.dataset.importers.pipeline import SourceBatch
from oracleproto.dataset.importers.readers import read_records
from oracleproto.dataset.importers.records import (
    Candidate,
    Drop,
    answer_letters,
    normalise_text,
    parse_source_date,
)
from oracleproto.dataset.models import letter

IMPORTER = "futurex-past"
DEFAULT_LEVELS: tuple[int, ...] = (1, 2)

#: How ``choice_type`` is decided for a multiple-choice row. ``answers``: ``multi`` exactly when the
#: ground truth has two or more answers (the earlier release's rule, so its rows are reproduced);
#: ``prompt``: also ``multi`` when the prompt asks for "all the correct option(s)" or the like (the
#: prompt's instruction, which FutureX prints on nearly every multiple-choice row).
ChoiceTypeRule = Literal["answers", "prompt"]
CHOICE_TYPE_RULES: tuple[ChoiceTypeRule, ...] = ("answers", "prompt")
DEFAULT_CHOICE_TYPE_RULE: ChoiceTypeRule = "answers"

#: An option line: at most three leading spaces (the instruction block is indented eight).
_OPTION_LINE = re.compile(r"^ {0,3}(.)\.[ \t]+(.*?)\s*$")
_FRAME_OPEN = 'The event to be predicted: "'
_EVENT = re.compile(
    r'The event to be predicted:\s*"(?P<event>.*?)\s*'
    r"\(resolved around[^()]*(?:\([^()]*\)[^()]*)*\)\s*\.?\s*\"?",
    re.DOTALL,
)
_LEAD_IN = re.compile(r"^(?:will\s+)?the\s+outcome\s+(?:will\s+)?be\s*[:：]?\s*", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_MULTI_HINT = re.compile(
    r"one or more|all (?:plausible|correct|applicable|possible)|more than one|multiple (?:options|answers)",
    re.IGNORECASE,
)
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_LETTER_LIST = re.compile(r"^[A-Z](?:\s*,\s*[A-Z])*$")
_NONE_OF_THE_ABOVE = {"none of the above", "none", "none of these"}


def parse_options(prompt: str) -> tuple[str, ...]:
    """The prompt's ``A. …`` lines in letter order (``chr(65 + i)``), lead-ins and quotes stripped."""
    raw: list[str] = []
    for line in prompt.splitlines():
        match = _OPTION_LINE.match(line)
        if match is not None and match.group(1) == letter(len(raw)):
            raw.append(match.group(2))
        elif raw and line.strip():
            break  # the option block ended (the instruction block or prose follows)
    if raw and _FRAME_OPEN in prompt and raw[-1].endswith('"'):
        # The prompt quotes the whole event block, options included, so the block's closing quote
        # ends the last option line; it is not part of that option ('"The Subway," Chappell Roan"').
        raw[-1] = raw[-1][:-1].rstrip()
    return tuple(_label(text) for text in raw)


def _label(text: str) -> str:
    label = _LEAD_IN.sub("", text).strip()
    quote = label[:1]
    # Only a label quoted as a whole loses its quotes; '"DtMF," Bad Bunny' keeps the title's.
    if quote in ("'", '"') and len(label) >= 2 and label[-1] == quote and quote not in label[1:-1]:
        label = label[1:-1].strip()
    return label


def event_from_prompt(prompt: str) -> str | None:
    """The event sentence cut from ``The event to be predicted: "… (resolved around …)."``."""
    match = _EVENT.search(prompt)
    if match is None:
        return None
    event = match.group("event").strip()
    return event or None


def parse_truth(value: object) -> list[str] | None:
    """``ground_truth`` as a list of strings: a list, or a string holding a Python/JSON list or one value."""
    if isinstance(value, (list, tuple)):
        return [str(v).strip() for v in value]
    if value is None:
        return None
    if not isinstance(value, str):
        return [str(value)]
    text = value.strip()
    for attempt in range(3):  # "\"['A']\"" is a JSON string holding a Python list: unwrap twice
        parsed: Any
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            try:
                parsed = ast.literal_eval(text)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                break
        if isinstance(parsed, (list, tuple)):
            return [str(v).strip() for v in parsed]
        if isinstance(parsed, str) and attempt < 2 and parsed.strip() != text:
            text = parsed.strip()
            continue
        if isinstance(parsed, str):
            return [parsed.strip()]
        return [str(parsed)]
    return [text]


def _level(value: object) -> int | None:
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def collapse(
    record: dict[str, Any],
    position: int,
    levels: Sequence[int],
    choice_type_rule: ChoiceTypeRule = DEFAULT_CHOICE_TYPE_RULE,
) -> Candidate | Drop:
    """One FutureX-Past record → a candidate row, or a drop with a reason."""
    raw_id = record.get("id")
    row_id = str(raw_id).strip() if raw_id not in (None, "") else f"#{position + 1}"
    level = _level(record.get("level"))
    if level is None:
        return Drop(row_id, "bad_level", "bad", f"level {record.get('level')!r} is not an integer")
    if level not in levels:
        why = "open-ended or numeric (not a discrete choice)" if level in (3, 4) else "not selected"
        return Drop(
            row_id, "level_excluded", "filtered", f"level {level}: {why}; select levels with --levels"
        )
    end_time = parse_source_date(record.get("end_time"))
    if end_time is None:
        return Drop(row_id, "bad_end_time", "bad", f"end_time {record.get('end_time')!r} is not a date")
    prompt = _text(record.get("prompt"))
    event = _text(record.get("title")) or event_from_prompt(prompt)
    if not event:
        return Drop(
            row_id, "no_event", "bad", "empty title and no 'The event to be predicted: \"…\"' in the prompt"
        )
    truth = parse_truth(record.get("ground_truth"))
    if not truth or not any(truth):
        return Drop(
            row_id, "empty_answer", "bad", f"ground_truth {record.get('ground_truth')!r} holds no answer"
        )
    truth = [t for t in truth if t]
    options = parse_options(prompt)
    # "None of the above" is an answer outside the options, unless the prompt lists it as one.
    listed = {normalise_text(o) for o in options}
    if any(normalise_text(t) in _NONE_OF_THE_ABOVE and normalise_text(t) not in listed for t in truth):
        return Drop(row_id, "answer_none_of_the_above", "filtered", "'None of the above' is not an option")
    question_type = "multiple_choice"
    if not options:
        if all(normalise_text(t) in ("yes", "no") for t in truth):
            options, question_type = ("Yes", "No"), "yes_no"
        else:
            boxed = _two_boxed(prompt)
            if boxed is None:
                return Drop(
                    row_id,
                    "no_options",
                    "bad",
                    "no 'A. …' option lines, no Yes/No truth, no two \\boxed{…} choices",
                )
            options, question_type = boxed, "binary_named"
    letters, unknown = answer_letters(truth, options)
    if unknown is not None:
        return Drop(
            row_id, "answer_not_an_option", "bad", f"ground_truth value {unknown!r} matches no option"
        )
    multi = len(letters) > 1
    if choice_type_rule == "prompt" and question_type == "multiple_choice":
        multi = multi or bool(_MULTI_HINT.search(prompt))
    return Candidate(
        id=row_id,
        choice_type="multi" if multi else "single",
        question_type=question_type,
        event=event,
        options=options,
        answer=tuple(letters),
        end_time=end_time,
    )


def _two_boxed(prompt: str) -> tuple[str, str] | None:
    choices: list[str] = []
    for payload in _BOXED.findall(prompt):
        label = payload.strip()
        # Format placeholders (\boxed{YOUR_PREDICTION}) and letter examples (\boxed{A, C}) are no choices.
        if _PLACEHOLDER.match(label) or _LETTER_LIST.match(label):
            continue
        if label and label not in choices:
            choices.append(label)
    return (choices[0], choices[1]) if len(choices) == 2 else None


def ingest(
    inputs: Iterable[Path],
    *,
    levels: Sequence[int] = DEFAULT_LEVELS,
    choice_type_rule: ChoiceTypeRule = DEFAULT_CHOICE_TYPE_RULE,
) -> list[Candidate | Drop]:
    """Every record of every input file (in the given order), collapsed or dropped."""
    items: list[Candidate | Drop] = []
    position = 0
    for path in inputs:
        for record in read_records(path):
            items.append(collapse(record, position, levels, choice_type_rule))
            position += 1
    return items


def batch(
    inputs: Sequence[Path],
    *,
    levels: Sequence[int],
    templates: dict[str, str],
    origin: str,
    choice_type_rule: ChoiceTypeRule = DEFAULT_CHOICE_TYPE_RULE,
) -> SourceBatch:
    """The pipeline input for FutureX-Past files."""
    return SourceBatch(
        importer=IMPORTER,
        inputs=tuple(inputs),
        items=tuple(ingest(inputs, levels=levels, choice_type_rule=choice_type_rule)),
        options={"levels": sorted(levels), "choice_type_rule": choice_type_rule},
        templates=templates,
        templates_origin=origin,
        description="Imported from FutureX-Past (futurex-ai/Futurex-Past) by oracleproto dataset import.",
    )
