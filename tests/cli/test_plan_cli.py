"""``oracleproto plan`` / ``run --dry-run``: offline, writes nothing; ``--models``, ``--limit``, the
TOML experiment config and its precedence (options > environment > config file > .env)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pydantic import AliasChoices

from oracleproto.cli.main import cli
from oracleproto.runner.setting_roles import SECTIONS

ENV = {
    "MODELS": "a/x,b/y",
    "MODEL_TRAINING_CUTOFFS": "a/x=2026-02,b/y=2026-03-20",
    "LEAK_DETECTOR_MODEL": "d/z",
}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No setting from the machine's environment; the working directory is empty."""
    for cls in SECTIONS.values():
        for info in cls.model_fields.values():  # type: ignore[attr-defined]
            alias = info.validation_alias
            for name in alias.choices if isinstance(alias, AliasChoices) else ():
                monkeypatch.delenv(str(name), raising=False)
                monkeypatch.delenv(str(name).lower(), raising=False)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def plan_json(*args: str) -> dict[str, Any]:
    code, out, err = invoke("plan", "--json", *args)
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def test_plan_and_dry_run_print_the_same_plan_offline_and_write_nothing(
    tmp_path: Path, socket_disabled: None
) -> None:
    code, planned, err = invoke("plan", "--prices", "example")
    assert code == 0, err
    code, dry, err = invoke("run", "--record", "--dry-run", "--prices", "example")
    assert code == 0, err
    assert planned == dry
    assert "a/x::r5::c4     16/16" in planned
    assert "b/y::r5::c4     12/16" in planned
    assert "b/y: 4 question(s), before training cutoff (training cutoff 2026-03-20)" in planned
    assert "no network call was made and nothing was written" in planned
    # The example table prices only the simulator's models: these stay out of the USD.
    assert "a/x (no token prices)" in planned
    assert list(tmp_path.iterdir()) == []  # no runs/, no cache/, no run directory


def test_models_and_limit_on_the_command_line() -> None:
    data = plan_json("--models", "b/y", "--limit", "3")
    [cell] = data["cells"]
    assert (cell["model"], cell["admitted"], cell["samples"], data["question_limit"]) == (
        "b/y::r5::c4",
        3,
        9,
        3,
    )


def test_a_model_without_a_cutoff_is_a_usage_error() -> None:
    code, _, err = invoke("plan", "--models", "c/w")
    assert code == 2
    assert "MODEL_TRAINING_CUTOFFS has no cutoff for 'c/w'" in err


CONFIG = """
[llm]
models = ["a/x"]
temperature = 0.3

[run]
sampling_n = 4
grid_c_list = [2, 3]
"""


def test_the_config_file_in_the_working_directory_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MODELS")
    (tmp_path / "oracleproto.toml").write_text(CONFIG, encoding="utf-8")
    data = plan_json()
    assert [c["model"] for c in data["cells"]] == ["a/x::r5::c2", "a/x::r5::c3"]
    assert data["sampling_n"] == 4


def test_precedence_options_environment_config_dotenv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "exp.toml"
    config.write_text(CONFIG, encoding="utf-8")
    (tmp_path / ".env").write_text("SAMPLING_N=7\nGRID_R_LIST=3\nGRID_C_LIST=1\n", encoding="utf-8")
    monkeypatch.setenv("GRID_C_LIST", "4")
    data = plan_json("--config", str(config), "--models", "b/y")
    assert [c["model"] for c in data["cells"]] == ["b/y::r3::c4"]  # option > env > config; .env R
    assert data["sampling_n"] == 4  # config file > .env
    monkeypatch.delenv("MODELS")
    assert plan_json("--config", str(config))["cells"][0]["model"] == "a/x::r3::c4"  # config > none


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[llm]\nmodel = 'a/x'\n", "[llm] model: unknown key; known keys: models"),
        ("[llm]\ntemperature = 'hot'\n", "[llm] temperature: Input should be a valid number"),
        ("[run]\nsampling_n = 0\n", "[run] sampling_n: Input should be greater than 0"),
        ("[models]\nx = 1\n", "models: unknown section"),
        (
            "[llm]\napi_key = 'sk-test-planted-fake-0000000000'\n",
            "[llm] api_key: not allowed in a config file",
        ),
        ("[llm\n", "is not valid TOML"),
    ],
)
def test_a_bad_config_file_exits_2_naming_the_file_and_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text, encoding="utf-8")
    for command in (["plan"], ["run", "--record"]):
        code, out, err = invoke(*command, "--config", str(config))
        assert code == 2, (out, err)
        assert f"config file {config}" in err and message in err, err
        assert "Traceback" not in err and "sk-test-planted-fake" not in err + out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_a_missing_config_file_is_named(tmp_path: Path) -> None:
    code, _, err = invoke("plan", "--config", str(tmp_path / "nope.toml"))
    assert code == 2 and "nope.toml does not exist" in err


def test_the_environment_is_left_as_it_was() -> None:
    before = dict(os.environ)
    plan_json()
    assert dict(os.environ) == before


#: The committed demo run (sim/careful, sim/hasty, sim/sloppy): a pilot measured read-only.
DEMO_RUN = Path(__file__).resolve().parents[2] / "cassettes" / "demo" / "20260101-000000-de00"


def test_calibrate_names_its_source_in_json_and_text_and_keeps_the_bounds(tmp_path: Path) -> None:
    plain = plan_json("--prices", "example")
    data = plan_json("--prices", "example", "--calibrate", str(DEMO_RUN))
    cal = data["calibration"]
    assert plain["calibration"] is None
    assert (cal["run_id"], cal["run_dir"]) == ("20260101-000000-de00", "20260101-000000-de00")
    assert cal["samples"] > 0 and sorted(cal["models"]) == ["sim/careful", "sim/hasty", "sim/sloppy"]
    assert cal["pooled_for"] == ["a/x", "b/y"]  # neither planned model was in the pilot
    assert any("calibrated from run 20260101-000000-de00" in a for a in data["assumptions"])
    for before, after in zip(plain["cells"], data["cells"], strict=True):
        assert before["llm_calls"]["upper"] == after["llm_calls"]["upper"]
        assert before["llm_prompt_tokens"]["upper"] == after["llm_prompt_tokens"]["upper"]
        assert before["llm_prompt_tokens"]["expected"] > after["llm_prompt_tokens"]["expected"]
    code, text, err = invoke("plan", "--calibrate", str(DEMO_RUN))
    assert code == 0, err
    assert f"calibrated from run 20260101-000000-de00 ({cal['samples']} samples measured" in text
    assert "pooled averages for: a/x, b/y" in text
    code, dry, err = invoke("run", "--record", "--dry-run", "--calibrate", str(DEMO_RUN))
    assert (code, dry) == (0, text), err
    assert list(tmp_path.iterdir()) == []


def test_calibrate_without_dry_run_is_refused(tmp_path: Path) -> None:
    code, _, err = invoke("run", "--record", "--calibrate", str(DEMO_RUN))
    assert code == 2 and "use it with --dry-run" in err, err
    assert list(tmp_path.iterdir()) == []


def test_calibrate_takes_a_run_id_under_the_runs_root(tmp_path: Path) -> None:
    root = tmp_path / "elsewhere"
    shutil.copytree(DEMO_RUN, root / DEMO_RUN.name)
    code, out, err = invoke("run", "--dry-run", "--runs-root", str(root), "--calibrate", DEMO_RUN.name)
    assert code == 0 and "calibrated from run 20260101-000000-de00" in out, err
    code, out, err = invoke("plan", "--calibrate", DEMO_RUN.name)  # RUNS_ROOT default: ./runs
    assert code == 2 and "20260101-000000-de00: run directory not found" in err, err
    assert "no run id, id prefix or run name under runs" in err, err


@pytest.mark.parametrize(
    ("env", "shown", "counted"),
    [
        ({}, "detector: d/z", True),
        (
            {"LEAK_DETECTOR_MODEL": ""},
            "detector: on, but LEAK_DETECTOR_MODEL is not set (a live run refuses this)",
            True,
        ),
        ({"ENABLE_SEARCH_LEAK_FILTER": "false"}, "detector: off", False),
    ],
    ids=["named", "on-without-a-model", "off"],
)
def test_the_plan_names_the_detector_as_it_counts_its_calls(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], shown: str, counted: bool
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, planned, err = invoke("plan", "--prices", "example")
    assert code == 0, err
    assert planned.splitlines()[0].endswith(shown)
    detector_calls = plan_json("--prices", "example")["cells"][0]["detector_calls"]
    assert (detector_calls["upper"] > 0) is counted
