"""Rerunning the record command on a finished, sealed run writes nothing and says so.

It used to rewrite ``manifest.json`` (``finished_at``), restamp every DB, append to the log and
rewrite the analysis, so a run sealed with ``verify --write-attestation`` no longer verified. A
run with something left to do (an interrupted analysis swap) is still completed by the rerun.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.verify import verify_run

RUN_ID = "20260101-000000-abcd"
ARGS = ["sim", "run", "--personas", "1", "--samples", "1", "--seed", "0", "--no-detector", "--no-progress"]


def files(root: Path) -> dict[str, bytes]:
    """Every file under the run directory (logs, lock, DB side files included) and its bytes."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("finished")
    entry = "from oracleproto.cli.main import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", entry, *ARGS, "--runs-root", str(runs), "--run-id", RUN_ID],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("ORACLEPROTO_TEST")},
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    sealing = CliRunner().invoke(cli, ["verify", str(runs / RUN_ID), "--write-attestation", "--quiet"])
    assert sealing.exit_code == 0, sealing.output
    return runs


@pytest.mark.parametrize("report", [True, False], ids=["with-report", "no-report"])
def test_a_no_op_rerun_writes_nothing_and_the_seal_holds(sealed: Path, report: bool) -> None:
    run_root = sealed / RUN_ID
    before = files(run_root)
    extra = [] if report else ["--no-report"]
    result = CliRunner().invoke(cli, [*ARGS, *extra, "--runs-root", str(sealed), "--run-id", RUN_ID])
    assert result.exit_code == 0, result.output
    assert (
        f"run {RUN_ID} is finished and nothing is pending (every slot done, no journal to fold, its "
        "analysis complete): nothing was written, its files and seal are as they were"
    ) in result.stderr
    assert files(run_root) == before
    report_ = verify_run(run_root)
    assert report_.ok, report_.failures


def test_a_rerun_with_something_pending_still_completes_it(sealed: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    shutil.copytree(sealed, runs)
    run_root = runs / RUN_ID
    # What a kill between the analysis pass's two renames leaves: analysis/ moved aside, none in place.
    (run_root / "analysis").rename(run_root / ".analysis.old-x")
    result = CliRunner().invoke(cli, [*ARGS, "--runs-root", str(runs), "--run-id", RUN_ID])
    assert result.exit_code == 0, result.output
    assert "nothing is pending" not in result.stderr
    assert (run_root / "analysis" / "summary.json").is_file()
    assert not (run_root / ".analysis.old-x").exists()
