"""A full disk during a recording: the message names the real cause and the command that resumes.

The fold's ``DiskFullError`` (what filled up, how much to free) used to be replaced on its way
out: first by the journal's own close failing on the same full disk, then by each model DB's
closing checkpoint ("database or disk is full"), so the user saw one generic SQLite line and no
resume hint. SQLite's ``SQLITE_FULL`` met while storing a sample is a full disk too.

The faults are injected (deterministic, any machine) and, where this machine may mount a tmpfs,
met for real on a small one, which is then enlarged and the run resumed.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from oracleproto.cli.main import cli
from oracleproto.primitives import killpoints
from oracleproto.primitives.killpoints import ENV_VAR
from oracleproto.store.model_store import ModelStore
from oracleproto.transport.fileio import Journal

RUN_ID = "20260301-120000-0a1f"
ARGS = ["sim", "run", "--personas", "1", "--samples", "1", "--no-detector", "--no-progress", "--no-report"]
RESUME = f"run {RUN_ID} stopped and is resumable: free the space, then rerun with --run-id {RUN_ID}"
GENERIC = "a SQLite database could not be used"


def _full() -> sqlite3.OperationalError:
    exc = sqlite3.OperationalError("database or disk is full")
    exc.sqlite_errorcode = sqlite3.SQLITE_FULL
    return exc


def record(runs_root: Path) -> Result:
    return CliRunner().invoke(cli, [*ARGS, "--runs-root", str(runs_root), "--run-id", RUN_ID])


@pytest.fixture
def fold_fails(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The first fold meets a full disk (the kill-point hook), in this process."""
    monkeypatch.setenv(ENV_VAR, "fold:1@ENOSPC")
    monkeypatch.setattr(killpoints, "_counts", {})
    killpoints._configured.cache_clear()
    try:
        yield
    finally:
        killpoints._configured.cache_clear()


def test_the_folds_message_survives_the_failing_cleanups(
    fold_fails: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_close, real_journal_close = ModelStore.close, Journal.close

    def checkpoint_fails(self: ModelStore) -> None:
        real_close(self)
        raise _full()  # what each DB's closing checkpoint raises on the same full disk

    def journal_close_fails(self: Journal, *, delete: bool) -> None:
        real_journal_close(self, delete=delete)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # flushing a buffered line

    monkeypatch.setattr(ModelStore, "close", checkpoint_fails)
    monkeypatch.setattr(Journal, "close", journal_close_fails)
    result = record(tmp_path)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and GENERIC not in result.output
    assert "no space left on the device holding" in result.output
    assert "while folding the crash journal (.journal/)" in result.output
    assert "MiB free there" in result.output
    assert RESUME in result.output


def test_sqlite_full_while_storing_a_sample_is_a_full_disk_with_the_resume_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_: object, **__: object) -> None:
        raise _full()

    monkeypatch.setattr(ModelStore, "write_sample", full)
    result = record(tmp_path)
    assert result.exit_code == 2, result.output
    assert GENERIC not in result.output
    assert f"{tmp_path / RUN_ID}: a model DB could not be written (database or disk is full); free space" in (
        result.output
    )
    assert RESUME in result.output


def test_a_close_that_fails_without_an_earlier_error_is_not_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_close = ModelStore.close

    def full(self: ModelStore) -> None:
        real_close(self)
        raise _full()

    monkeypatch.setattr(ModelStore, "close", full)
    result = record(tmp_path)
    assert result.exit_code == 2, result.output
    assert "database or disk is full" in result.output


def _mount(path: Path, size: str) -> bool:
    path.mkdir()
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.mark.parametrize(
    ("size", "cause"),
    [
        ("120k", "a model DB could not be written (database or disk is full)"),
        ("600k", "while folding the crash journal (.journal/)"),
    ],
    ids=["db-write", "fold"],
)
def test_a_real_full_disk_names_its_cause_and_the_resume_completes(
    size: str, cause: str, tmp_path: Path
) -> None:
    target = tmp_path / "small"
    if not _mount(target, size):
        pytest.skip("cannot mount a tmpfs here (the injected tests above cover the messages)")
    try:
        entry = "from oracleproto.cli.main import main; main()"
        command = [sys.executable, "-c", entry, *ARGS, "--runs-root", str(target), "--run-id", RUN_ID]
        env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
        full = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
        assert full.returncode == 2, full.stderr
        assert "Traceback" not in full.stderr and GENERIC not in full.stderr
        assert cause in full.stderr and RESUME in full.stderr
        subprocess.run(["mount", "-o", "remount,size=64m", str(target)], check=True, timeout=30)
        resumed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
        assert resumed.returncode == 0, resumed.stderr
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=30, check=False)
