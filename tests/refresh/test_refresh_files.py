"""The refresh audit under ``analysis/audit/``: kept by later analysis passes, checked by verify."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from oracleproto.analysis import analyze_run
from oracleproto.analysis.postrun import write_run_analysis
from oracleproto.analysis.writer import write_analysis
from oracleproto.primitives.clock import FakeClock
from oracleproto.refresh.report import JSON_NAME, MD_NAME
from oracleproto.runner.replay import replay_run
from oracleproto.settings.model import AnalysisSettings
from oracleproto.sim.harness import SIM_TAVILY_USD_PER_CREDIT
from oracleproto.store import RunDir
from oracleproto.store.rundir import AUDIT_SUBDIR
from oracleproto.verify import export_bundle, verify_run
from oracleproto.verify.bundle import verify_bundle
from tests.refresh.conftest import ORIGINAL, Scenario

#: The analysis settings the scenarios were refreshed with (see conftest._settings).
ANALYSIS = AnalysisSettings.model_validate(
    {"bootstrap_samples": 200, "tavily_usd_per_credit": SIM_TAVILY_USD_PER_CREDIT}
)


@pytest.fixture
def runs(revised: Scenario, tmp_path: Path) -> tuple[Path, Path]:
    """Private copies of the revised scenario's old and new runs, side by side."""
    old = tmp_path / ORIGINAL
    new = tmp_path / revised.result.new.root.name
    shutil.copytree(revised.old, old)
    shutil.copytree(revised.result.new.root, new)
    return old, new


def audit_bytes(run: Path) -> dict[str, bytes]:
    folder = run / "analysis" / AUDIT_SUBDIR
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def verdicts(run: Path) -> dict[str, str]:
    """Check name → status for the audit checks of ``verify``."""
    report = verify_run(run)
    return {c.what: c.status for c in report.checks if AUDIT_SUBDIR in c.what}


def test_an_analysis_pass_after_the_refresh_keeps_the_audit(runs: tuple[Path, Path]) -> None:
    _, new = runs
    before = audit_bytes(new)
    assert sorted(before) == [JSON_NAME, MD_NAME]
    write_run_analysis(new, ANALYSIS)  # what `oracleproto report` does
    assert (new / "analysis" / "summary.json").is_file()
    assert audit_bytes(new) == before
    write_run_analysis(new, ANALYSIS)  # and again, over a full analysis folder
    assert audit_bytes(new) == before


def test_a_folder_holding_only_the_audit_is_an_analysis_folder_to_write(runs: tuple[Path, Path]) -> None:
    _, new = runs
    assert [p.name for p in (new / "analysis").iterdir()] == [AUDIT_SUBDIR]
    result = analyze_run(new, ANALYSIS.convention, bootstrap_samples=10, seed=1)
    written = write_analysis(result, new / "analysis")
    assert written and (new / "analysis" / AUDIT_SUBDIR / JSON_NAME).is_file()


def test_verify_rebuilds_the_audit_from_both_runs(runs: tuple[Path, Path]) -> None:
    _, new = runs
    write_run_analysis(new, ANALYSIS)
    report = verify_run(new)
    assert report.ok, [c for c in report.checks if not c.ok]
    got = verdicts(new)
    assert got[f"analysis/{AUDIT_SUBDIR}/{JSON_NAME} regeneration"] == "pass"
    assert got[f"analysis/{AUDIT_SUBDIR}/{MD_NAME}"] == "pass"


def test_verify_without_the_old_run_checks_consistency_only(runs: tuple[Path, Path]) -> None:
    old, new = runs
    shutil.rmtree(old)
    got = verdicts(new)
    assert got[f"analysis/{AUDIT_SUBDIR}/{JSON_NAME} regeneration"] == "skip"
    assert got[f"analysis/{AUDIT_SUBDIR}/{JSON_NAME}"] == "pass"


def test_verify_reports_an_edited_audit_with_its_location(runs: tuple[Path, Path]) -> None:
    _, new = runs
    md = new / "analysis" / AUDIT_SUBDIR / MD_NAME
    md.write_bytes(md.read_bytes().replace(b"## ", b"## edited ", 1))
    data = (new / "analysis" / AUDIT_SUBDIR / JSON_NAME).read_bytes()
    (new / "analysis" / AUDIT_SUBDIR / JSON_NAME).write_bytes(data.replace(b'"total"', b'"total" ', 1))
    report = verify_run(new)
    failures = {c.what: c.detail for c in report.failures}
    assert "byte" in failures[f"analysis/{AUDIT_SUBDIR}/{MD_NAME}"]
    assert "line" in failures[f"analysis/{AUDIT_SUBDIR}/{JSON_NAME} regeneration"]


def test_verify_rejects_an_incomplete_audit(runs: tuple[Path, Path]) -> None:
    _, new = runs
    (new / "analysis" / AUDIT_SUBDIR / MD_NAME).unlink()
    failures = {c.what: c.detail for c in verify_run(new).failures}
    assert f"missing {MD_NAME}" in failures[f"analysis/{AUDIT_SUBDIR}/"]


async def test_a_refreshed_run_replays_byte_for_byte(runs: tuple[Path, Path], tmp_path: Path) -> None:
    _, new = runs
    write_run_analysis(new, ANALYSIS)
    report = await replay_run(
        new, tmp_path / "replayed", clock=FakeClock(), rand=random.Random(0), progress=False,
        after=lambda run, settings, plots: write_run_analysis(run.root, settings.analysis, plots),
    )  # fmt: skip
    assert [(c.what, c.detail) for c in report.checks if not c.ok] == []
    checked = {c.what for c in report.checks}
    assert "manifest.json" in checked and "analysis/summary.json" in checked
    assert not any(AUDIT_SUBDIR in what for what in checked)  # the audit is verify's to check
    assert RunDir.open(report.replayed).load_manifest().refresh == RunDir.open(new).load_manifest().refresh


def test_a_refreshed_run_exports_and_verifies_as_a_bundle(runs: tuple[Path, Path], tmp_path: Path) -> None:
    _, new = runs
    write_run_analysis(new, ANALYSIS)
    bundle = export_bundle(new, tmp_path / "refreshed.tar.gz")
    report = verify_bundle(bundle)
    assert report.ok, [c for c in report.checks if not c.ok]
    got = {c.what: c.status for c in report.checks}
    # Inside the bundle the refreshed run travels alone: the audit is checked for consistency.
    assert got[f"analysis/{AUDIT_SUBDIR}/{MD_NAME}"] == "pass"
    assert got[f"analysis/{AUDIT_SUBDIR}/{JSON_NAME} regeneration"] == "skip"
