"""``conformance`` end to end: our harness against recorded traffic, request for request.

The shared captures are the earlier implementation's; with its profile every LLM, detector and
Tavily request body must be byte-identical and every captured exchange used. Our own harness is
captured too (the simulator writes the capture while a real run records against it), and must
conform to itself under the built-in profile and under the earlier one.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.conformance.capture import CaptureWriter
from oracleproto.conformance.session import conformance_settings, run_conformance
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.settings.model import Settings
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from tests.conftest import ROOT, SHARED

EARLIER = SHARED / "fixtures" / "earlier-harness"
CUTOFFS = "sim/careful=2025-01,sim/greedy=2025-01,sim/hasty=2025-01,sim/sloppy=2025-01"
#: The run settings of the captured runs (README of the fixtures): n = 1, T = 6, C = 4, R = 5.
LIVE_ENV = {
    "MODELS": "sim/careful,sim/greedy,sim/hasty,sim/sloppy",
    "MODEL_TRAINING_CUTOFFS": CUTOFFS,
    "SAMPLING_N": "1",
    "LEAK_DETECTOR_MODEL": "sim/detector",
}
SCRIPT_ENV = {
    "MODELS": "script/a,script/b",
    "MODEL_TRAINING_CUTOFFS": "script/a=2025-01,script/b=2025-01",
    "SAMPLING_N": "1",
    "LEAK_DETECTOR_MODEL": "sim/detector",
}
COUNTS = {
    "ref-live.jsonl": {"llm": 76, "search": 61, "detector": 305},
    "ref-script.jsonl": {"llm": 72, "search": 36, "detector": 180},
}


def _clean_env(monkeypatch: pytest.MonkeyPatch, values: dict[str, str]) -> None:
    for name in list(os.environ):
        if name.isupper() and not name.startswith(("PATH", "HOME", "PYTHON", "TMP", "LANG", "LC_")):
            monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)


def _conformance(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capture: str, env: dict[str, str], profile: str
) -> tuple[int, dict[str, Any]]:
    _clean_env(monkeypatch, env)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        cli,
        [
            "conformance",
            str(EARLIER / "captures" / capture),
            "--profile",
            profile,
            "--dataset",
            str(EARLIER / "subset6.db"),
            "--json",
        ],
    )
    return result.exit_code, json.loads(result.output)


@pytest.mark.shared
@pytest.mark.slow
@pytest.mark.parametrize(("capture", "env"), [("ref-live.jsonl", LIVE_ENV), ("ref-script.jsonl", SCRIPT_ENV)])
def test_the_earlier_profile_reproduces_every_captured_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capture: str, env: dict[str, str]
) -> None:
    code, report = _conformance(
        monkeypatch, tmp_path, capture, env, str(EARLIER / "earlier-harness.profile.json")
    )
    assert report["ok"] is True and code == 0, json.dumps(report)[:3000]
    for channel, expected in COUNTS[capture].items():
        counts = report["channels"][channel]
        assert counts["ours"] == counts["captured"] == counts["identical"] == expected, (channel, counts)
    assert report["run"]["call_errors"] == {}


@pytest.mark.shared
@pytest.mark.slow
def test_the_builtin_profile_does_not_conform_to_the_earlier_harness(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The check bites: oracleproto's own bytes differ from the earlier harness's on every channel."""
    code, report = _conformance(monkeypatch, tmp_path, "ref-script.jsonl", SCRIPT_ENV, "builtin")
    assert code == 1 and report["ok"] is False
    channels = report["channels"]
    assert channels["llm"]["identical"] == 0 and channels["llm"]["paired"] == 72
    assert channels["search"]["identical"] == 0
    # The earlier harness's detector prompts do not follow our template: no position to pair at.
    assert channels["detector"]["paired"] == 0


def _limited(settings: Settings, profile: Path | None = None) -> Settings:
    run = settings.run.model_copy(update={"question_limit": 5, "harness_profile": profile})
    llm = settings.llm
    if profile is not None:
        llm = llm.model_copy(update={"send_seed": False})  # the earlier harness sends no seed
    return settings.model_copy(update={"run": run, "llm": llm})


@pytest.mark.slow
@pytest.mark.parametrize(
    "profile", [None, EARLIER / "earlier-harness.profile.json"], ids=["builtin", "earlier"]
)
def test_our_own_capture_conforms_to_the_profile_it_was_recorded_with(
    tmp_path: Path, profile: Path | None
) -> None:
    if profile is not None and not profile.exists():
        pytest.fail(f"{profile} is missing: tests need ../shared beside the repository")
    db = ROOT / "oracleproto" / "data" / "demo.db"
    capture = tmp_path / "ours.jsonl"
    spec = SimRunSpec(models=2, samples=2, runs_root=tmp_path / "recorded")
    writer = CaptureWriter(capture)
    with Simulator(SimConfig(seed=5), capture=writer) as sim:
        settings = _limited(simulated_settings(sim, spec), profile)
        options = RunOptions(
            settings=settings, source_db=db, runs_root=tmp_path / "recorded", mode="record", progress=False
        )
        asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(1)))
    writer.close()
    checked = conformance_settings(settings, db)
    result = asyncio.run(run_conformance(capture, checked, db, tmp_path / "conformance"))
    report = result.report.as_dict()
    assert result.report.ok, json.dumps(report)[:3000]
    for channel in ("llm", "search", "detector"):
        counts = report["channels"][channel]
        assert counts["ours"] == counts["captured"] == counts["identical"] > 0, (channel, counts)
    assert result.summary.errors == {}


@pytest.mark.slow
def test_a_changed_profile_text_is_found_at_its_position(tmp_path: Path) -> None:
    """One changed byte in the profile (the status header) shows as a difference at the first request
    that carries it, with its JSON path."""
    db = ROOT / "oracleproto" / "data" / "demo.db"
    capture = tmp_path / "ours.jsonl"
    spec = SimRunSpec(models=1, samples=1, runs_root=tmp_path / "recorded")
    writer = CaptureWriter(capture)
    with Simulator(SimConfig(seed=5), capture=writer) as sim:
        settings = _limited(simulated_settings(sim, spec))
        options = RunOptions(
            settings=settings, source_db=db, runs_root=tmp_path / "recorded", mode="record", progress=False
        )
        asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(1)))
    writer.close()
    exported = CliRunner().invoke(cli, ["profile", "export", "builtin"])
    assert exported.exit_code == 0, exported.output
    data = json.loads(exported.output)
    data["texts"]["status_header"] = data["texts"]["status_header"].replace("remaining", "left")
    changed = tmp_path / "changed.profile.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    checked = conformance_settings(_limited(settings, changed), db)
    checked = replace_send_seed(checked, settings.llm.send_seed)
    result = asyncio.run(run_conformance(capture, checked, db, tmp_path / "conformance"))
    report = result.report.as_dict()
    assert not result.report.ok
    llm = report["channels"]["llm"]
    assert 0 < llm["identical"] < llm["ours"]
    assert all(".content" in d["path"] for d in llm["differences"]), llm["differences"][:3]


def replace_send_seed(settings: Settings, send_seed: bool) -> Settings:
    return settings.model_copy(update={"llm": settings.llm.model_copy(update={"send_seed": send_seed})})
