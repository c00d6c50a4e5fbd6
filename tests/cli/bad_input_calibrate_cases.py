"""Bad-input cases of `plan --calibrate RUN` and `run --dry-run --calibrate RUN`: exit 2, no file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bad_input_support import RUN_ID, Case, copy_run, mkdir


def _unfinished_run(cwd: Path) -> None:
    """A copy of the demo run whose every slot is unwritten (an interrupted run's first seconds)."""
    run = copy_run(cwd)
    for db in sorted((run / "db").glob("*.db")):
        with sqlite3.connect(db) as conn:
            n = int(conn.execute("SELECT sampling_n FROM run_meta").fetchone()[0])
            sets = ", ".join(f"s{i}_created_at = NULL" for i in range(n))
            conn.execute(f"UPDATE run_results SET {sets}")
        conn.close()


def calibrate_cases() -> list[Case]:
    """A missing RUN, a folder that is no run, a run with no finished sample, --calibrate without a plan."""
    return [
        Case("plan:calibrate-missing", ("plan", "--calibrate", "nope"), 2, "nope: run directory not found"),
        Case(
            "plan:calibrate-not-a-run",
            ("plan", "--calibrate", "empty"),
            2,
            "empty: not a run directory",
            mkdir("empty"),
        ),
        Case(
            "plan:calibrate-no-finished-sample",
            ("plan", "--calibrate", f"runs/{RUN_ID}"),
            2,
            "has no finished sample to calibrate from",
            _unfinished_run,
        ),
        Case(
            "run:dry-run-calibrate-missing",
            ("run", "--record", "--dry-run", "--calibrate", "nope"),
            2,
            "nope: run directory not found",
        ),
        Case(
            "run:calibrate-without-dry-run",
            ("run", "--record", "--calibrate", "nope"),
            2,
            "use it with --dry-run",
        ),
    ]
