"""A run published by an older analysis revision verifies by its numbers; a current one by its bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oracleproto._version import ANALYSIS_REVISION
from oracleproto.analysis import analyze_run, read_run, summary_json, write_analysis
from oracleproto.analysis.postrun import analyze_with_settings
from oracleproto.analysis.revisions import summary_revision
from oracleproto.settings.model import AnalysisSettings
from oracleproto.verify import VerifyReport, verify_run
from oracleproto.verify.regen import published_revision
from tests.earlier_layout import write_earlier_run

#: The revision this code writes for the demo's convention (paper).
PAPER_REVISION = summary_revision("paper")


def _summary(run: Path) -> Path:
    return run / "analysis" / "summary.json"


def _set_revision(run: Path, revision: int | None) -> dict[str, object]:
    path = _summary(run)
    document = json.loads(path.read_text(encoding="utf-8"))
    document.pop("analysis_revision", None)
    if revision is not None:
        document["analysis_revision"] = revision
    path.write_text(json.dumps(document, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    return document


def _publish_as_revision(run: Path, revision: int) -> None:
    """Rewrite ``summary.json`` as analysis ``revision`` writes it from the run's DBs and settings.

    Regenerated, not relabelled: before exact reductions (revision 4) a bootstrap bound on a
    rounding boundary rounded by the CPU's BLAS kernel, so only this machine's regeneration matches.
    """
    snapshot = json.loads(read_run(run).models[0].run_meta["config_snapshot"])
    result = analyze_with_settings(run, AnalysisSettings.from_values(snapshot["analysis"]), revision=revision)
    _summary(run).write_text(summary_json(result), encoding="utf-8")


def _analysis_checks(report: VerifyReport) -> dict[str, tuple[str, str]]:
    return {c.what: (c.status, c.detail) for c in report.checks if c.what.startswith("analysis/")}


def _edit_table(run: Path) -> None:
    table = run / "analysis" / "table3_overall.md"
    table.write_text(table.read_text(encoding="utf-8").replace("|", "¦", 1), encoding="utf-8")


def test_the_committed_demo_is_written_by_the_current_revision(demo_run: Path) -> None:
    summary = json.loads(_summary(demo_run).read_text(encoding="utf-8"))
    assert summary["convention"] == "paper"
    assert published_revision(demo_run / "analysis") == PAPER_REVISION == 5
    assert ANALYSIS_REVISION == 6  # reference-v4's four-decimal CSVs
    assert summary["comparisons"]["metric"] == "composite_accuracy"


def test_a_run_published_at_revision_4_verifies_by_its_numbers(demo_copy: Path) -> None:
    """Revision 5 added the comparisons (a summary key and table_pairs): a run published at
    revision 4, without them, is re-scored by revision 4's definitions, and passes."""
    _publish_as_revision(demo_copy, 4)
    for table in (demo_copy / "analysis").glob("table_pairs.*"):
        table.unlink()
    published = json.loads(_summary(demo_copy).read_text(encoding="utf-8"))
    assert published["analysis_revision"] == 4 and "comparisons" not in published
    checks = _analysis_checks(verify_run(demo_copy))
    assert checks["analysis/summary.json"] == (
        "pass",
        "written by analysis revision 4; every published number agrees with db/",
    )
    assert checks["analysis/ tables and plots"][0] == "skip"


def test_an_older_revision_is_checked_by_numbers_not_bytes(demo_copy: Path) -> None:
    _publish_as_revision(demo_copy, 1)
    _set_revision(demo_copy, None)  # a summary without the key is revision 1
    _edit_table(demo_copy)
    checks = _analysis_checks(verify_run(demo_copy))
    assert checks["analysis/summary.json"][0] == "pass"
    status, detail = checks["analysis/ tables and plots"]
    assert status == "skip" and "revision 1" in detail and f"writes revision {PAPER_REVISION}," in detail
    assert "analysis/table3_overall.md" not in checks


def test_an_older_revision_with_a_changed_number_fails_naming_the_key(demo_copy: Path) -> None:
    _publish_as_revision(demo_copy, 1)
    document = _set_revision(demo_copy, 1)
    models = document["models"]
    assert isinstance(models, dict)
    first = sorted(models)[0]
    models[first]["composite_accuracy"] = 0.123456
    _summary(demo_copy).write_text(json.dumps(document, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    report = verify_run(demo_copy)
    assert not report.ok
    status, detail = _analysis_checks(report)["analysis/summary.json"]
    assert status == "FAIL"
    assert f"models.{first}.composite_accuracy differs" in detail and "0.123456" in detail


def test_the_current_revision_still_compares_bytes(demo_copy: Path) -> None:
    _edit_table(demo_copy)
    status, detail = _analysis_checks(verify_run(demo_copy))["analysis/table3_overall.md"]
    assert status == "FAIL" and "regeneration from db/" in detail


def test_a_newer_revision_is_not_judged_by_an_older_version(demo_copy: Path) -> None:
    _set_revision(demo_copy, ANALYSIS_REVISION + 1)
    status, detail = _analysis_checks(verify_run(demo_copy))["analysis/"]
    assert status == "skip" and "upgrade oracleproto" in detail


def test_an_unreadable_revision_falls_back_to_byte_comparison(demo_copy: Path) -> None:
    path = _summary(demo_copy)
    path.write_text(path.read_text(encoding="utf-8").replace('"analysis_revision"', '"x"', 1) + "{", "utf-8")
    assert published_revision(demo_copy / "analysis") is None
    status, _ = _analysis_checks(verify_run(demo_copy))["analysis/summary.json"]
    assert status == "FAIL"


@pytest.fixture
def reference_run_of_revision_2(tmp_path: Path) -> Path:
    """An earlier-layout run whose reference-v4 analysis was published by analysis revision 2."""
    run = write_earlier_run(tmp_path / "runs", analysis=False)
    write_analysis(analyze_run(run, "reference-v4", revision=2), run / "analysis")
    return run


def _buckets(summary: dict[str, object]) -> list[object]:
    models = summary["models"]
    assert isinstance(models, dict)
    return [models[slug]["entropy_accuracy_buckets"] for slug in sorted(models)]


def test_a_reference_v4_run_of_revision_2_verifies_by_that_revisions_definitions(
    reference_run_of_revision_2: Path,
) -> None:
    run = reference_run_of_revision_2
    published = json.loads(_summary(run).read_text(encoding="utf-8"))
    assert published["analysis_revision"] == 2 and published["convention"] == "reference-v4"
    # Not vacuous: revision 3 buckets this run differently, so the current definitions would fail it.
    current = json.loads(
        json.dumps(analyze_run(run, "reference-v4", bootstrap_samples=1000).summary(), default=float)
    )
    assert _buckets(current) != _buckets(published)
    checks = _analysis_checks(verify_run(run))
    assert checks["analysis/summary.json"] == (
        "pass",
        "written by analysis revision 2; every published number agrees with db/",
    )
    status, detail = checks["analysis/ tables and plots"]
    assert status == "skip" and f"writes revision {summary_revision('reference-v4')}," in detail


def test_a_reference_v4_run_of_revision_2_with_a_changed_bucket_fails(
    reference_run_of_revision_2: Path,
) -> None:
    run = reference_run_of_revision_2
    document = json.loads(_summary(run).read_text(encoding="utf-8"))
    first = sorted(document["models"])[0]
    document["models"][first]["entropy_accuracy_buckets"]["low"]["questions"] += 1
    _summary(run).write_text(json.dumps(document, sort_keys=True, indent=2) + "\n", encoding="utf-8")
    status, detail = _analysis_checks(verify_run(run))["analysis/summary.json"]
    assert status == "FAIL"
    assert f"models.{first}.entropy_accuracy_buckets.low.questions differs" in detail
