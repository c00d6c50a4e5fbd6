"""``TAVILY_MAX_RESULTS``/``GRID_R_LIST`` and ``REACT_MAX_SEARCH_CALLS``/``GRID_C_LIST`` agree.

A documented setting either works or is refused: the single values were silently overridden by the
grid lists (``plan`` printed R=[5] C=[4] whatever they said). Now the single value alone sets the
grid, the list alone sets the single value, and two that disagree are refused naming both.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.errors import ConfigError
from oracleproto.settings.model import load_settings

GRID_VARS = ("TAVILY_MAX_RESULTS", "REACT_MAX_SEARCH_CALLS", "GRID_R_LIST", "GRID_C_LIST")


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in (*GRID_VARS, "MODELS", "MODEL_TRAINING_CUTOFFS", "QUESTION_LIMIT", "SAMPLING_N"):
        monkeypatch.delenv(name, raising=False)


def test_defaults_agree() -> None:
    s = load_settings(None)
    assert (s.search.max_results, s.run.grid_r_list) == (5, [5])
    assert (s.react.max_search_calls, s.run.grid_c_list) == (4, [4])


def test_a_single_value_alone_is_the_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_MAX_RESULTS", "8")
    monkeypatch.setenv("REACT_MAX_SEARCH_CALLS", "2")
    s = load_settings(None)
    assert (s.search.max_results, s.run.grid_r_list) == (8, [8])
    assert (s.react.max_search_calls, s.run.grid_c_list) == (2, [2])


def test_a_list_alone_sets_the_single_value_from_its_first(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("GRID_R_LIST=10,5\nGRID_C_LIST=8,4\n", encoding="utf-8")
    s = load_settings(env)
    assert (s.search.max_results, s.run.grid_r_list) == (10, [10, 5])
    assert (s.react.max_search_calls, s.run.grid_c_list) == (8, [8, 4])


def test_both_agreeing_are_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_MAX_RESULTS", "5")
    monkeypatch.setenv("GRID_R_LIST", "5,10")
    assert load_settings(None).run.grid_r_list == [5, 10]


def test_both_disagreeing_are_refused_naming_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAVILY_MAX_RESULTS", "8")
    monkeypatch.setenv("GRID_R_LIST", "5,10")
    monkeypatch.setenv("REACT_MAX_SEARCH_CALLS", "2")
    monkeypatch.setenv("GRID_C_LIST", "4")
    with pytest.raises(ConfigError) as info:
        load_settings(None)
    message = str(info.value)
    assert "TAVILY_MAX_RESULTS=8 and GRID_R_LIST=5,10 disagree" in message
    assert "REACT_MAX_SEARCH_CALLS=2 and GRID_C_LIST=4 disagree" in message
    assert "set only one of them, or start GRID_C_LIST with 2" in message


def test_the_config_file_counts_as_set(tmp_path: Path) -> None:
    (tmp_path / "oracleproto.toml").write_text("[search]\nmax_results = 3\n", encoding="utf-8")
    from oracleproto.settings.run_config import config_values, find_config

    s = load_settings(None, config_values(find_config(None)))
    assert (s.search.max_results, s.run.grid_r_list) == (3, [3])


def test_plan_shows_the_settings_it_was_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELS", "sim/careful")
    monkeypatch.setenv("MODEL_TRAINING_CUTOFFS", "sim/careful=2026-01")
    monkeypatch.setenv("TAVILY_MAX_RESULTS", "8")
    monkeypatch.setenv("REACT_MAX_SEARCH_CALLS", "2")
    result = CliRunner().invoke(cli, ["plan"])
    assert result.exit_code == 0, result.output
    assert "grid R=[8] C=[2]" in result.stdout
    data = json.loads(CliRunner().invoke(cli, ["plan", "--json"]).stdout)
    assert (data["r_list"], data["c_list"]) == ([8], [2])
    monkeypatch.setenv("GRID_C_LIST", "4,8")
    refused = CliRunner().invoke(cli, ["plan"])
    assert refused.exit_code == 2
    assert (
        "error: invalid settings:\n  - REACT_MAX_SEARCH_CALLS=2 and GRID_C_LIST=4,8 disagree"
        in refused.stderr
    )


def test_plan_samples_and_limit_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODEL_TRAINING_CUTOFFS", "sim/careful=2026-01")
    args = ["plan", "--models", "sim/careful", "--samples", "5", "--limit", "2", "--json"]
    data = json.loads(CliRunner().invoke(cli, args).stdout)
    assert (data["sampling_n"], data["question_count"], data["question_limit"]) == (5, 2, 2)
