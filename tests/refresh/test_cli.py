"""``cassettes diff``, ``sim run --refresh`` and ``run --refresh`` through click's CliRunner."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli, main
from oracleproto.refresh import audit_json
from oracleproto.sim.harness import SIM_LLM_KEY, SIM_TAVILY_KEY
from oracleproto.sim.server import SimConfig, Simulator
from tests.refresh.conftest import ORIGINAL, Scenario


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def test_diff_json_is_the_refresh_audit(revised: Scenario) -> None:
    code, out, _ = run(
        "cassettes", "diff", revised.old, revised.result.new.root, "--format", "json", "--bootstrap", "200"
    )
    assert code == 0
    assert out == audit_json(revised.audit)


def test_diff_fails_on_drift_only_when_asked_and_only_on_drift(
    revised: Scenario, unchanged: Scenario
) -> None:
    code, out, _ = run(
        "cassettes", "diff", revised.old, revised.result.new.root, "--fail-on-drift", "--bootstrap", "0"
    )
    assert code == 1 and re.search(r"DRIFT: provider [1-9]\d*", out), out
    code, out, _ = run(
        "cassettes", "diff", unchanged.old, unchanged.result.new.root, "--fail-on-drift", "--bootstrap", "0"
    )
    assert code == 0 and "zero drift" in out


def test_diff_of_one_run_compares_its_last_two_generations(revised: Scenario) -> None:
    new = revised.result.new.root
    code, out, _ = run("cassettes", "diff", new, new, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert (doc["old"], doc["new"]) == (f"{new.name}@g0", f"{new.name}@g1")
    assert doc["entries"]["changed"] == json.loads(audit_json(revised.audit))["entries"]["changed"]
    assert doc["answers"] is None  # both generations share one set of databases
    code, md, _ = run("cassettes", "diff", f"{new}@0", f"{new}@1", "--format", "md")
    changed = len(doc["entries"]["changed"])
    assert code == 0 and md.startswith("# Refresh audit\n") and f"## Changed entries ({changed})" in md


def test_diff_of_a_missing_generation_is_a_clear_error(
    revised: Scenario, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    new = revised.result.new.root
    monkeypatch.setattr(sys, "argv", ["oracleproto", "cassettes", "diff", f"{new}@7", str(new)])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert (
        f"error: {new}: generation 7 does not exist (present: 0, 1); write PATH@GEN with one of them" in err
    )


def test_diff_of_a_single_generation_run_names_the_fix(revised: Scenario) -> None:
    result = CliRunner().invoke(cli, ["cassettes", "diff", str(revised.old), str(revised.old)])
    assert result.exit_code == 2
    assert "there is no earlier generation to compare with; give two runs, or PATH@GEN" in (result.stderr)


def test_sim_run_refresh_with_selector(original: Path, tmp_path: Path) -> None:
    shutil.copytree(original, tmp_path / ORIGINAL)
    code, out, err = run(
        "sim", "run", "--personas", "2", "--samples", "2", "--runs-root", tmp_path,
        "--no-progress", "--no-report", "--refresh", ORIGINAL, "--run-id", "20260101-000000-0b01",
        "--revise", "sim/hasty=1", "--select", "model=sim/hasty,question=demo-03",
    )  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert "selection: model=sim/hasty,question=demo-03" in lines
    assert lines[-1] == str(tmp_path / "20260101-000000-0b01")
    assert f"wrote {tmp_path / '20260101-000000-0b01' / 'analysis' / 'audit' / 'refresh_audit.md'}" in lines
    assert "refresh of 20260101-000000-0a00 → run 20260101-000000-0b01" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--select", "model=x"], "--select needs --refresh RUN"),
        (["run", "--record", "--refresh", "x"], "--refresh excludes --record/--replay"),
        (["sim", "run", "--select", "model=x"], "--select needs --refresh RUN"),
        (
            ["sim", "run", "--refresh", "x", "--revise", "sim/hasty"],
            "--revise 'sim/hasty': expected MODEL=REV",
        ),
    ],
)
def test_refresh_usage_errors(args: list[str], message: str) -> None:
    code, _, err = run(*args)
    assert code == 2 and message in err


def test_refresh_with_a_selector_naming_an_unknown_model_is_refused(original: Path, tmp_path: Path) -> None:
    shutil.copytree(original, tmp_path / ORIGINAL)
    result = CliRunner().invoke(
        cli,
        ["sim", "run", "--runs-root", str(tmp_path), "--refresh", ORIGINAL, "--select", "model=sim/nobody"],
    )
    assert result.exit_code == 2
    assert "--select model=sim/nobody: model sim/nobody is not in the run (models: " in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [ORIGINAL]  # nothing written


def _env_file(path: Path, sim: Simulator, **extra: str) -> Path:
    """The simulated run's settings written as the .env a researcher would use with ``run``."""
    lines = {
        "LLM_BASE_URL": sim.llm_base_url,
        "LLM_API_KEY": SIM_LLM_KEY,
        "MODELS": "sim/careful,sim/hasty",
        "MODEL_TRAINING_CUTOFFS": "sim/careful=2026-01,sim/hasty=2025-12-15",
        "LLM_SEND_SEED": "true",
        "TAVILY_API_KEY": SIM_TAVILY_KEY,
        "TAVILY_BASE_URL": sim.search_base_url,
        "LEAK_DETECTOR_MODEL": "sim/detector",
        "SAMPLING_N": "2",
        "ANALYSIS_BOOTSTRAP_N": "0",
        **extra,
    }
    path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()))
    return path


@pytest.mark.parametrize(
    ("extra", "verdict"),
    [({}, "zero drift: provider 0"), ({"ENABLE_BUDGET_FOOTER": "false"}, "DRIFT: provider 0")],
)
def test_run_refresh_from_the_environment(
    original: Path, tmp_path: Path, extra: dict[str, str], verdict: str
) -> None:
    shutil.copytree(original, tmp_path / ORIGINAL)
    with Simulator(SimConfig(seed=0)) as sim:
        env = _env_file(tmp_path / "sim.env", sim, **extra)
        code, out, err = run(
            "run", "--refresh", tmp_path / ORIGINAL, "--runs-root", tmp_path, "--env-file", env,
            "--run-id", "20260101-000000-0b02", "--no-report", "--no-progress",
        )  # fmt: skip
    assert code == 0, err
    assert verdict in out
    if extra:  # the footer is part of the prompt: harness drift, never provider drift
        assert "harness 0," not in out


def test_refresh_stopped_by_a_revoked_key_says_how_to_retry(original: Path, tmp_path: Path) -> None:
    shutil.copytree(original, tmp_path / ORIGINAL)
    code, _, err = run(
        "sim", "run", "--personas", "2", "--samples", "2", "--runs-root", tmp_path, "--no-progress",
        "--refresh", ORIGINAL, "--run-id", "20260101-000000-0b03", "--revoke-llm-key",
    )  # fmt: skip
    assert code == 3
    assert "401" in err
    assert "refresh 20260101-000000-0b03 of 20260101-000000-0a00 stopped and is resumable" in err
    assert f"rerun with --refresh {ORIGINAL} --run-id 20260101-000000-0b03" in err
    assert "auth: auth:" not in err
    assert (tmp_path / ORIGINAL / "cassettes").is_dir()
