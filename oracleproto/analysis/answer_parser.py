"""The answer-parser mode (``ANSWER_PARSER``) a run's letters were parsed with, for its reports.

The analysis never re-parses: it scores the letter sets the run stored. The mode is read from
each model's ``run_meta.config_snapshot`` so every output can say which parser produced them;
a snapshot written before the setting existed reads as the mode that produced it
(``oracleproto.scoring.parser_mode``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oracleproto.analysis.reader import ModelRun, RunData
from oracleproto.errors import AnalysisError
from oracleproto.scoring.parser_mode import recorded_answer_parser
from oracleproto.settings.model import AnswerParser

#: The run-level value when its models were parsed with different modes.
MIXED = "mixed"


def model_answer_parser(model: ModelRun, run_dir: Path) -> AnswerParser:
    """The mode recorded in ``model``'s config snapshot (an empty or NULL snapshot records none)."""
    where = f"{run_dir / 'db' / model.file}: run_meta.config_snapshot"
    raw = model.run_meta.get("config_snapshot")
    snapshot: Any = {}
    if raw not in (None, ""):
        try:
            snapshot = json.loads(str(raw))
        except json.JSONDecodeError as exc:
            raise AnalysisError(f"{where} is not valid JSON: {exc}") from None
    if not isinstance(snapshot, dict):
        raise AnalysisError(f"{where} must be a JSON object, not {type(snapshot).__name__}")
    try:
        return recorded_answer_parser(snapshot)
    except ValueError as exc:
        raise AnalysisError(
            f"{where}: {exc}; the run's snapshot is damaged or was written by another tool"
        ) from None


def answer_parsers(run: RunData) -> dict[str, AnswerParser]:
    """Virtual slug → the mode its letters were parsed with."""
    return {m.slug: model_answer_parser(m, run.run_dir) for m in run.models}


def run_answer_parser(modes: dict[str, AnswerParser]) -> str:
    """The mode shared by every model, or ``mixed`` when they differ."""
    distinct = set(modes.values())
    return distinct.pop() if len(distinct) == 1 else MIXED
