"""The LLM account's credit runs out mid-run: ``oracleproto sim run`` exits 3, then resumes after a top-up.

One real subprocess (the console entry point, as a user runs it) for the abort; the resume and the
uninterrupted reference run in-process. The simulator is given credit for 200 chat answers (main
LLM and detector share the account), then answers OpenAI's 429 ``insufficient_quota``; rerunning
without ``--llm-credit`` is the top-up.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.replay import replay_run

RUN_ID = "20260105-060708-f00d"
ARGS = (
    "--run-id",
    RUN_ID,
    "--personas",
    "1",
    "--samples",
    "2",
    "--seed",
    "0",
    "--no-report",
    "--no-progress",
)


def sim_run(root: Path, *extra: str) -> tuple[int, str]:
    """``oracleproto sim run`` in-process; exit code and stderr."""
    result = CliRunner().invoke(
        cli, ["sim", "run", "--runs-root", str(root), *ARGS, *extra], catch_exceptions=False
    )
    return result.exit_code, result.stderr


def test_credit_running_out_exits_3_and_resumes_to_the_uninterrupted_run(
    tmp_path: Path, slot_reader: Callable[[Path], dict[Any, dict[str, Any]]]
) -> None:
    entry = "from oracleproto.cli.main import main; main()"
    root = tmp_path / "topped-up"
    aborted = subprocess.run(
        [sys.executable, "-c", entry, "sim", "run", "--runs-root", str(root), *ARGS, "--llm-credit", "200"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert aborted.returncode == 3, aborted.stderr
    err = aborted.stderr
    assert "insufficient_quota" in err and "quota" in err and "Traceback" not in err
    assert "top up the credit" in err and f"rerun with --run-id {RUN_ID}" in err and "resumable" in err
    run_root = root / RUN_ID
    assert json.loads((run_root / "manifest.json").read_text(encoding="utf-8"))["finished_at"] is None
    log = [
        json.loads(line)
        for line in (run_root / "logs" / f"{RUN_ID}.log").read_text(encoding="utf-8").splitlines()
    ]
    assert [
        (e["reason"], e["channel"] in ("llm", "detector")) for e in log if e["event"] == "run_aborted"
    ] == [("quota", True)]
    done_before = sum(1 for e in log if e["event"] == "sample_done")
    assert done_before < 32

    code, err = sim_run(root)  # topped up: a new simulator with unlimited credit
    assert code == 0, err
    assert f"{done_before} done before this session" in err
    code, err = sim_run(tmp_path / "uninterrupted")
    assert code == 0, err

    resumed = slot_reader(run_root)
    assert resumed == slot_reader(tmp_path / "uninterrupted" / RUN_ID)
    assert all(cells["error"] is None for cells in resumed.values())
    # The quota rejections left in the journal were re-sent, never served: the run replays.
    report = asyncio.run(
        replay_run(run_root, tmp_path / "replayed", clock=FakeClock(), rand=random.Random(0), progress=False)
    )
    assert [(c.what, c.detail) for c in report.checks if not c.ok] == []
