"""MODEL_DISPLAY_NAMES is recorded with the run: its analysis pass names models by it, a resume with
other names is allowed and keeps the recorded ones, and verify regenerates the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

from oracleproto.analysis.postrun import write_run_analysis
from oracleproto.runner.execute import RunSummary
from oracleproto.settings.model import Settings
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import Simulator
from oracleproto.store import RunDir
from oracleproto.verify.run import verify_run
from tests.runner.conftest import record_with

RUN_ID = "20260301-120000-0a3e"


def _named(settings: Settings, names: dict[str, str]) -> Settings:
    analysis = settings.analysis.model_copy(update={"display_names": names, "bootstrap_samples": 20})
    return settings.model_copy(update={"analysis": analysis})


def _run(settings: Settings, runs_root: Path) -> RunSummary:
    return record_with(
        settings, runs_root, RUN_ID, after=lambda run, s: write_run_analysis(run.root, s.analysis)
    )


def test_recorded_names_name_the_run_and_survive_a_resume_with_other_names(tmp_path: Path) -> None:
    spec = SimRunSpec(models=1, samples=1, runs_root=tmp_path, detector=False)
    with Simulator() as sim:
        settings = simulated_settings(sim, spec)
        _run(_named(settings, {"sim/careful": "Careful Model"}), tmp_path)
        run = RunDir.open(tmp_path / RUN_ID)
        table = run.analysis_dir / "table3_overall.md"
        assert "| Careful Model |" in table.read_text(encoding="utf-8")
        first = table.read_bytes()
        # Presentation only: not compared, so the resume goes ahead, and keeps the recorded names.
        resumed = _run(_named(settings, {"sim/careful": "Renamed"}), tmp_path)
    assert resumed.slots_run == 0
    assert table.read_bytes() == first
    summary = json.loads((run.analysis_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["display_names"] == {"sim/careful::r5::c4": "Careful Model"}
    assert summary["models_under_test"][0]["name"] == "Careful Model"
    report = verify_run(run.root)
    analysis_checks = [c for c in report.checks if c.what.startswith("analysis/")]
    assert any(c.what == "analysis/table2_models.md" for c in analysis_checks)
    assert all(c.ok for c in analysis_checks), [c for c in analysis_checks if not c.ok]
