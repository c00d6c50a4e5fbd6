"""Table-driven bad-input suite: every case exits 1/2 with its message, no traceback, nothing left.

The table is ``bad_input_cases.all_cases()``; the checks are ``bad_input_support.check_result``.
File-system faults that need a real kernel limit (read-only or full file systems, ``ulimit -f``,
unreadable files) are in ``test_fs_faults.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest

# The suite's helper modules sit beside it (appended: never shadows another folder's conftest).
sys.path.append(str(Path(__file__).resolve().parent))
from bad_input_cases import all_cases
from bad_input_support import Case, check_result, expand, invoke, tree

from oracleproto.cli.main import cli

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cwd = tmp_path / "cwd"
    state = tmp_path / "state"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    if case.setup is not None:
        case.setup(cwd)
    before = tree(cwd)
    env = {"XDG_STATE_HOME": str(state), **case.env}
    result = invoke([expand(a, cwd) for a in case.args], env)
    check_result(case, result, before, cwd)
    assert not state.exists(), "an internal error wrote a crash file"


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    out: set[tuple[str, ...]] = set()
    # Through click's lookup, not ``group.commands``: the CLI registers its commands lazily.
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        if isinstance(command, click.Group):
            out |= _commands(command, (*prefix, name))
        else:
            out.add((*prefix, name))
    return out


def test_the_table_covers_every_command_with_at_least_150_cases() -> None:
    ids = {c.id for c in CASES}
    assert len(ids) == len(CASES), "case ids must be unique"
    assert len(CASES) >= 150
    covered = {tuple(a for a in c.args if not a.startswith("-") and "{" not in a)[:2] for c in CASES}
    # `demo record` re-records the published demo and is exercised by its own tests.
    missing = [
        cmd
        for cmd in _commands(cli)
        if cmd != ("demo", "record") and not any(cmd == tuple(c[: len(cmd)]) for c in covered)
    ]
    assert not missing, missing
