"""Commands run while a recording is in progress name the live recorder, not a wrong cause.

A recording folds its crash journal into the cassette files only when it ends (or every few
minutes), so while it runs its entries may be in the journal only. ``cassettes ls|show|stats``
used to say the recording "stopped before it folded them" (and to resume it — a second writer),
and ``run --run-id`` of a run being recorded said "no models to run" when this shell lacked the
recording's settings.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parent))
from bad_input_support import RUN_ID, copy_run, invoke, tree

from oracleproto.store import RunDir
from oracleproto.transport.layout import JOURNAL_DIR


def _journal_only(run_root: Path) -> None:
    """The state of a recording in its first minutes: entries in its journal, no cassette file yet."""
    cassettes = run_root / "cassettes"
    (cassettes / JOURNAL_DIR).mkdir(exist_ok=True)
    (cassettes / JOURNAL_DIR / "4242-abcd1234.jsonl").write_text('{"key": "pending"}\n', encoding="utf-8")
    for path in cassettes.rglob("*.yaml"):
        path.unlink()
    shutil.rmtree(cassettes / "llm")


@pytest.mark.parametrize("sub", ["ls", "stats"])
@pytest.mark.parametrize("target", ["run", "cassettes"])
def test_cassettes_commands_name_the_live_recorder(sub: str, target: str, tmp_path: Path) -> None:
    run = RunDir.open(copy_run(tmp_path))
    _journal_only(run.root)
    path = run.root if target == "run" else run.cassettes_dir
    before = tree(tmp_path)
    with run.writer_lock():
        result = invoke(["cassettes", sub, str(path)], {})
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"run {RUN_ID} is being recorded right now by another process (pid {os.getpid()}" in result.output
    assert "wait for that process to finish, then rerun this command" in result.output
    assert "stopped before it folded them" not in result.output
    assert tree(tmp_path) == before | {f"runs/{RUN_ID}/.lock"}


def test_without_a_live_recorder_the_journal_message_is_unchanged(tmp_path: Path) -> None:
    run = RunDir.open(copy_run(tmp_path))
    _journal_only(run.root)
    result = invoke(["cassettes", "ls", str(run.root)], {})
    assert result.exit_code == 2, result.output
    assert "of a recording stopped before it folded them: resume that run" in result.output


@pytest.mark.parametrize("command", [["run"], ["run", "--record"], ["sim", "run", "--no-detector"]])
def test_run_run_id_of_a_run_being_recorded_says_so_first(command: list[str], tmp_path: Path) -> None:
    run = RunDir.open(copy_run(tmp_path))
    before = tree(tmp_path)
    # No MODELS, no keys in this shell: what used to be reported instead of the live recorder.
    env = {"MODELS": "", "LLM_BASE_URL": "", "LLM_API_KEY": "", "TAVILY_API_KEY": ""}
    with run.writer_lock():
        result = invoke([*command, "--runs-root", str(run.root.parent), "--run-id", RUN_ID], env)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert f"run {RUN_ID} is being written by another process (pid {os.getpid()}" in result.output
    assert "no models to run" not in result.output and "cannot record live" not in result.output
    assert tree(tmp_path) == before | {f"runs/{RUN_ID}/.lock"}
