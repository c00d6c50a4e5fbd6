"""Which answer-parser mode a recorded config snapshot stands for, and replay rebuilding it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from oracleproto.runner.identity import config_snapshot
from oracleproto.runner.reconstruct import settings_from_snapshot
from oracleproto.runner.setting_roles import SECTIONS
from oracleproto.scoring.parser_mode import recorded_answer_parser
from oracleproto.settings.model import Settings


def snapshot(answer_parser: str | None = None) -> dict[str, Any]:
    """Our snapshot of the default settings, with the mode set or (None) removed."""
    settings = Settings(**{name: cls.from_values({}) for name, cls in SECTIONS.items()})  # type: ignore[attr-defined]
    snap = config_snapshot(settings)
    if answer_parser is None:
        del snap["react"]["answer_parser"]
    else:
        snap["react"]["answer_parser"] = answer_parser
    return snap


@pytest.mark.parametrize(
    ("snap", "mode"),
    [
        (snapshot("strict"), "strict"),
        (snapshot("algorithm2"), "algorithm2"),
        (snapshot(None), "strict"),  # oracleproto before ANSWER_PARSER: its only rule
        ({"MODELS": "vendor/m"}, "algorithm2"),  # the earlier implementation: the paper's parser
        ({"MODELS": "vendor/m", "answer_parser": "Strict "}, "strict"),  # its keys and values, loosely
        ({}, "algorithm2"),
    ],
)
def test_recorded_answer_parser(snap: dict[str, Any], mode: str) -> None:
    assert recorded_answer_parser(snap) == mode


@pytest.mark.parametrize("snap", [snapshot("lenient"), {"ANSWER_PARSER": 2}])
def test_an_unknown_recorded_mode_is_named(snap: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"the recorded ANSWER_PARSER is .*, not algorithm2 or strict"):
        recorded_answer_parser(snap)


@pytest.mark.parametrize(
    ("snap", "mode"), [(snapshot(None), "strict"), (snapshot("algorithm2"), "algorithm2")]
)
def test_replay_rebuilds_the_mode_that_produced_the_run(snap: dict[str, Any], mode: str) -> None:
    settings = settings_from_snapshot(snap, where=Path("db/x.db"))
    assert settings.react.answer_parser == mode
    assert settings.run.mode == "replay"
