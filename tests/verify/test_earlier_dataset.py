"""``verify`` finds an earlier-implementation run's dataset by the SOURCE_DB its snapshot records."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.store import model_file_map
from oracleproto.verify.earlier_dataset import launch_folder, search_paths
from oracleproto.verify.findings import Check, VerifyReport
from oracleproto.verify.run import verify_run
from tests.earlier_layout import SLUGS, SOURCE_DB, write_earlier_run

LABELS = [f"db/{name}" for name in model_file_map(SLUGS).values()]
DATASET_NAME = Path(SOURCE_DB).name


@pytest.fixture
def earlier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A run under ``tmp/lab/runs`` (its dataset in ``tmp/lab``), verified from an empty folder."""
    run = write_earlier_run(tmp_path / "lab" / "runs")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return run


def _checks(report: VerifyReport) -> dict[str, Check]:
    return {c.what: c for c in report.checks}


def _expected_hash(run: Path) -> str:
    value: str = json.loads((run / "manifest.json").read_text(encoding="utf-8"))["hashes"]["source_db"]
    return value


def _set_snapshot(run: Path, **changes: object) -> None:
    for label in LABELS:
        with sqlite3.connect(run / label) as conn:
            snapshot = json.loads(conn.execute("SELECT config_snapshot FROM run_meta").fetchone()[0])
            for key, value in changes.items():
                if value is None:
                    snapshot.pop(key, None)
                else:
                    snapshot[key] = value
            conn.execute("UPDATE run_meta SET config_snapshot = ?", (json.dumps(snapshot),))
        conn.close()


def test_found_where_the_snapshot_says_relative_to_the_folder_the_run_was_started_from(earlier: Path) -> None:
    report = verify_run(earlier)
    assert report.ok, report.failures
    checks = _checks(report)
    dataset = earlier.parent.parent / DATASET_NAME
    assert checks["dataset"].status == "pass"
    assert checks["dataset"].detail == f"{dataset}: SOURCE_DB {SOURCE_DB!r} of run_meta.config_snapshot"
    for name in ("source_db", "metadata", "prompt_templates"):
        assert checks[f"dataset {name} hash"].status == "pass"


def test_found_relative_to_the_current_folder_first(earlier: Path, tmp_path: Path) -> None:
    here = Path.cwd()
    shutil.move(earlier.parent.parent / DATASET_NAME, here / DATASET_NAME)
    check = _checks(verify_run(earlier))["dataset"]
    assert check.status == "pass" and check.detail.startswith(f"{here / DATASET_NAME}:")


def test_not_found_fails_naming_the_flag_the_file_and_the_hash(earlier: Path) -> None:
    (earlier.parent.parent / DATASET_NAME).unlink()
    report = verify_run(earlier)
    assert not report.ok
    check = _checks(report)["dataset"]
    assert check.status == "FAIL"
    assert f"SOURCE_DB {SOURCE_DB!r} of run_meta.config_snapshot is not a file under" in check.detail
    assert str(Path.cwd()) in check.detail and str(earlier.parent.parent) in check.detail
    assert check.detail.endswith(
        f"pass --dataset PATH with the source DB {DATASET_NAME!r} (sha256 {_expected_hash(earlier)})"
    )
    # Nothing else was compared against a dataset that is not there (the bundled demo is not tried).
    assert "dataset source_db hash" not in _checks(report)


def test_not_found_the_command_says_so_and_dataset_fixes_it(earlier: Path, tmp_path: Path) -> None:
    moved = tmp_path / "archive" / "copy.db"
    moved.parent.mkdir()
    shutil.move(earlier.parent.parent / DATASET_NAME, moved)
    result = CliRunner().invoke(cli, ["verify", str(earlier), "--quiet"])
    assert result.exit_code == 1
    assert "FAIL  dataset" in result.output and "pass --dataset PATH with the source DB" in result.output
    assert "Traceback" not in result.output
    fixed = CliRunner().invoke(cli, ["verify", str(earlier), "--quiet", "--dataset", str(moved)])
    assert fixed.exit_code == 0, fixed.output


def test_found_but_another_file_fails_naming_both_hashes(earlier: Path) -> None:
    found = earlier.parent.parent / DATASET_NAME
    found.write_bytes(found.read_bytes() + b"\0")
    check = _checks(verify_run(earlier))["dataset"]
    assert check.status == "FAIL"
    expected = _expected_hash(earlier)
    assert f"SOURCE_DB {SOURCE_DB!r} of run_meta.config_snapshot is {found}, whose sha256 " in check.detail
    assert "is not the recorded source_db hash" in check.detail
    flag = f"pass --dataset PATH with the source DB {DATASET_NAME!r} (sha256 {expected})"
    assert check.detail.endswith(flag)


def test_a_snapshot_without_source_db_fails_saying_so(earlier: Path) -> None:
    _set_snapshot(earlier, SOURCE_DB=None)
    check = _checks(verify_run(earlier))["dataset"]
    assert check.status == "FAIL"
    assert check.detail == (
        "run_meta.config_snapshot records no SOURCE_DB; pass --dataset PATH with the source DB the run "
        f"was recorded on (sha256 {_expected_hash(earlier)})"
    )


def test_an_absolute_source_db_is_taken_as_is(earlier: Path, tmp_path: Path) -> None:
    target = tmp_path / "datasets" / "eval.db"
    target.parent.mkdir()
    shutil.move(earlier.parent.parent / DATASET_NAME, target)
    _set_snapshot(earlier, SOURCE_DB=str(target))
    check = _checks(verify_run(earlier))["dataset"]
    assert check.status == "pass" and check.detail.startswith(f"{target}:")


def test_a_dataset_carried_with_the_run_is_the_fallback(earlier: Path, tmp_path: Path) -> None:
    carried = tmp_path / "bundle" / "dataset.db"
    carried.parent.mkdir()
    shutil.move(earlier.parent.parent / DATASET_NAME, carried)
    report = verify_run(earlier, extra_datasets=(carried,))
    assert report.ok, report.failures
    assert _checks(report)["dataset"].detail == f"{carried}: carried with the run"


def test_the_launch_folder_follows_the_recorded_runs_root() -> None:
    run = Path("/lab/project/data/runs/20250911-080910-beef")
    assert launch_folder(run, {"RUNS_ROOT": "./data/runs"}) == Path("/lab/project")
    assert launch_folder(run, {"RUNS_ROOT": "runs"}) == Path("/lab/project/data")
    # A RUNS_ROOT the location does not end with, an absolute one or none: the runs folder's parent.
    for snapshot in ({"RUNS_ROOT": "./elsewhere"}, {"RUNS_ROOT": "/abs/runs"}, {}):
        assert launch_folder(run, snapshot) == Path("/lab/project/data")
    paths = search_paths(run, {"SOURCE_DB": "./sets/a.db", "RUNS_ROOT": "data/runs"}, Path("/cwd"))
    assert paths == [Path("/cwd/sets/a.db"), Path("/lab/project/sets/a.db"), run / "sets" / "a.db"]
