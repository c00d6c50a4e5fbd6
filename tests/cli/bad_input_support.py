"""Helpers of the table-driven bad-input suite: the case type, file makers and the checks.

Every case runs a real command through the top-level handler (click's CliRunner, in a fresh
working directory) and asserts: the exit status, a specific substring of the message, no
traceback, no internal-error crash file, and no file left behind by the failed command.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from click.testing import CliRunner, Result

from oracleproto.cli.main import cli
from oracleproto.dataset.demo import demo_db_path, demo_questions_path, demo_templates_path

ROOT = Path(__file__).resolve().parents[2]
DEMO_RUN = ROOT / "cassettes" / "demo" / "20260101-000000-de00"
RUN_ID = DEMO_RUN.name

#: Builds the case's files in its working directory (the test's tmp dir).
Setup = Callable[[Path], None]


@dataclass(frozen=True)
class Case:
    """One bad input: the command line, what it must say, and the exit status it must give."""

    id: str
    args: tuple[str, ...]
    code: int
    message: str
    setup: Setup | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    #: Paths (relative to the working dir) the command may leave: a resumable run directory.
    may_create: tuple[str, ...] = ()


def expand(arg: str, cwd: Path) -> str:
    """Placeholders: ``{demo_db}``, ``{demo_rows}``, ``{demo_templates}``, ``{run}`` (a copy in cwd)."""
    return arg.format(
        demo_db=demo_db_path(),
        demo_rows=demo_questions_path(),
        demo_templates=demo_templates_path(),
        run=cwd / "runs" / RUN_ID,
        cwd=cwd,
    )


def invoke(args: list[str], env: Mapping[str, str]) -> Result:
    """Run the real command line in-process, through the top-level handler."""
    return CliRunner().invoke(cli, args, env=dict(env))


def tree(root: Path) -> set[str]:
    """Every path under ``root`` (relative), directories included."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def check_result(case: Case, result: Result, before: set[str], cwd: Path) -> None:
    """The assertions every case makes."""
    output = result.output
    assert "Traceback" not in output, output
    assert isinstance(result.exception, SystemExit), (result.exception, output)
    assert result.exit_code == case.code, output
    assert case.message in output, output
    assert "internal error" not in output, output
    after = {p for p in tree(cwd) if not any(p.startswith(k) for k in case.may_create)}
    assert after == before, f"left behind: {sorted(after - before)}; removed: {sorted(before - after)}"


# --- file makers ---------------------------------------------------------------------------


def copy_run(cwd: Path) -> Path:
    """A writable copy of the demo run at ``runs/<run id>`` (what ``{run}`` names)."""
    target = cwd / "runs" / RUN_ID
    shutil.copytree(DEMO_RUN, target)
    return target


def write(rel: str, data: bytes | str) -> Setup:
    """A setup writing one file."""

    def make(cwd: Path) -> None:
        path = cwd / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))

    return make


def mkdir(rel: str) -> Setup:
    """A setup making one (empty) directory."""
    return lambda cwd: (cwd / rel).mkdir(parents=True, exist_ok=True)


def fifo(rel: str) -> Setup:
    """A named pipe where a file is expected (opening it for reading would block)."""
    return lambda cwd: os.mkfifo(cwd / rel)


def all_of(*setups: Setup) -> Setup:
    """Several setups in order."""

    def make(cwd: Path) -> None:
        for setup in setups:
            setup(cwd)

    return make


def sqlite_db(rel: str, *statements: str) -> Setup:
    """A SQLite file made by ``statements`` (a wrong schema, an empty table, …)."""

    def make(cwd: Path) -> None:
        path = cwd / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(path) as conn:
            for statement in statements:
                conn.execute(statement)
        conn.close()

    return make


def demo_copy(rel: str, *statements: str) -> Setup:
    """A copy of the demo dataset, then ``statements`` applied to it."""

    def make(cwd: Path) -> None:
        path = cwd / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(demo_db_path(), path)
        with sqlite3.connect(path) as conn:
            for statement in statements:
                conn.execute(statement)
        conn.close()

    return make


def truncated_demo(rel: str, size: int) -> Setup:
    """The first ``size`` bytes of the demo dataset."""
    return lambda cwd: (cwd / rel).write_bytes(demo_db_path().read_bytes()[:size])


def damaged_page(rel: str, source: Path, page: int) -> Setup:
    """A copy of ``source`` whose b-tree page ``page`` (1-based) has an invalid page type."""

    def make(cwd: Path) -> None:
        data = bytearray(source.read_bytes())
        page_size = int.from_bytes(data[16:18], "big")
        data[(page - 1) * page_size] = 0x55
        (cwd / rel).parent.mkdir(parents=True, exist_ok=True)
        (cwd / rel).write_bytes(bytes(data))

    return make


def in_run(setup_on_run: Callable[[Path], None]) -> Setup:
    """Copy the demo run to ``runs/<id>`` then change it."""

    def make(cwd: Path) -> None:
        setup_on_run(copy_run(cwd))

    return make


def run_db(run: Path) -> Path:
    """The first per-model DB of a run."""
    return sorted((run / "db").glob("*.db"))[0]
