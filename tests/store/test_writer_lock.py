"""One writer per run directory: a second process on the same run id is refused at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from oracleproto.errors import StoreError
from oracleproto.store import RunDir
from oracleproto.store.rundir import WRITER_LOCK

RUN_ID = "20260101-000000-0d0d"


def test_a_second_writer_is_refused_with_the_holder_named(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    with run.writer_lock():
        with pytest.raises(StoreError) as refused, run.writer_lock():
            pass
        assert f"run {RUN_ID} is being written by another process (pid {os.getpid()}" in str(refused.value)
        assert "rerun with the same --run-id" in str(refused.value)
    with run.writer_lock():  # released on exit: the next writer gets it
        pass


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    holder = (
        "import sys, time; from pathlib import Path; from oracleproto.store import RunDir\n"
        "with RunDir(Path(sys.argv[1]), sys.argv[2]).writer_lock():\n"
        "    print('held', flush=True); time.sleep(120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", holder, str(run.root), RUN_ID], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(StoreError, match=f"pid {proc.pid}"), run.writer_lock():
            pass
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    assert (run.root / WRITER_LOCK).is_file()  # the file stays; the kernel dropped the lock
    with run.writer_lock():
        pass
