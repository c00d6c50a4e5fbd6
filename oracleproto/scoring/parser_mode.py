"""Which answer-parser mode (``ANSWER_PARSER``) produced a recorded run, read from its config snapshot.

Runs recorded before the setting existed have no mode in their snapshot. What produced them is
still known: an oracleproto run of that time parsed in ``strict`` mode (the only one it had),
while the earlier implementation of the paper (its flat snapshot, upper-case variable names)
ran the paper's own parser, Algorithm 2. Resume checks, replay and the analysis read a snapshot
through this one function so they agree on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from oracleproto.settings.model import AnswerParser, Settings

ANSWER_PARSERS: tuple[AnswerParser, ...] = get_args(AnswerParser)
#: The mode of an oracleproto run whose snapshot predates ``ANSWER_PARSER``.
BEFORE_THE_SETTING: AnswerParser = "strict"
#: The mode of a run written by the earlier implementation (the paper's Algorithm 2).
EARLIER_IMPLEMENTATION: AnswerParser = "algorithm2"
_ENV_NAME = "ANSWER_PARSER"
_SECTIONS = tuple(Settings.model_fields)


def as_answer_parser(value: object) -> AnswerParser | None:
    """``value`` when it names a mode, else None."""
    for mode in ANSWER_PARSERS:
        if value == mode:
            return mode
    return None


def is_sectioned(snapshot: Mapping[str, Any]) -> bool:
    """True for oracleproto's snapshot layout (one object per settings section)."""
    return any(isinstance(snapshot.get(name), Mapping) for name in _SECTIONS)


def recorded_answer_parser(snapshot: Mapping[str, Any]) -> AnswerParser:
    """The mode ``snapshot`` records, or the one that produced a run recorded before the setting.

    Raises ``ValueError`` naming the value when the snapshot records something that is not a mode.
    """
    if is_sectioned(snapshot):
        react = snapshot.get("react")
        if not isinstance(react, Mapping) or "answer_parser" not in react:
            return BEFORE_THE_SETTING
        raw: object = react["answer_parser"]
    else:
        found = [v for k, v in snapshot.items() if isinstance(k, str) and k.upper() == _ENV_NAME]
        if not found:
            return EARLIER_IMPLEMENTATION
        raw = found[0]
    mode = as_answer_parser(raw.strip().lower() if isinstance(raw, str) else raw)
    if mode is None:
        allowed = " or ".join(ANSWER_PARSERS)
        raise ValueError(f"the recorded {_ENV_NAME} is {raw!r}, not {allowed}")
    return mode
