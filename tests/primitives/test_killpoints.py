"""The kill-point test hook: its grammar, and that it does nothing unless asked."""

from __future__ import annotations

import pytest

from oracleproto.errors import ConfigError
from oracleproto.primitives import killpoints
from oracleproto.primitives.killpoints import ENV_VAR, KillPoint, parse


def test_parse_reads_phase_count_and_action() -> None:
    assert parse("commit:8@TERM") == KillPoint("commit", 8, "TERM")
    assert parse("fold") == KillPoint("fold", 1, "KILL")
    assert parse("fold:2@ENOSPC") == KillPoint("fold", 2, "ENOSPC")
    assert parse("switch-move:3@INT") == KillPoint("switch-move", 3, "INT")


@pytest.mark.parametrize("value", ["nowhere", "commit:0", "commit:x", "fold@HUP", "commit:-1"])
def test_a_bad_value_names_the_variable_and_the_grammar(value: str) -> None:
    with pytest.raises(ConfigError, match=f"{ENV_VAR}='{value}': expected <phase>\\[:<n>\\]\\[@<action>\\]"):
        parse(value)


def test_the_hook_counts_and_acts_only_at_its_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "fold:2@ENOSPC")
    monkeypatch.setattr(killpoints, "_counts", {})
    killpoints._configured.cache_clear()
    try:
        killpoints.reached("commit")  # another phase: nothing
        killpoints.reached("fold")  # the 1st time: nothing
        with pytest.raises(OSError, match="No space left on device"):
            killpoints.reached("fold")
        killpoints.reached("fold")  # past its count: nothing
    finally:
        killpoints._configured.cache_clear()


def test_the_hook_is_inert_without_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    killpoints._configured.cache_clear()
    for phase in killpoints.PHASES:
        killpoints.reached(phase)
    assert killpoints._configured() is None
