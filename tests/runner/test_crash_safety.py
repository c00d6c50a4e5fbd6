"""A run killed after its last sample, before its journal was folded (issue 11): every tool copes.

The state is built from a small recording: its cassette entries are moved into a dead
process's journal and the manifest is unsealed, which is exactly what a kill between "last sample
written" and "cassettes folded" leaves. ``test_kill_points.py`` produces the same state with real
kills; these tests check each command on it in-process, plus ``replay`` stopped by a real SIGTERM.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.errors import StoreError
from oracleproto.primitives.clock import FakeClock
from oracleproto.primitives.killpoints import ENV_VAR
from oracleproto.runner.replay import replay_run
from oracleproto.store import RunDir
from oracleproto.transport.entry import to_json_line
from oracleproto.transport.layout import JOURNAL_DIR, all_cassette_files
from oracleproto.transport.store import CassetteStore
from oracleproto.verify import verify_run
from oracleproto.verify.gc import plan_gc
from tests.runner.conftest import SimRecorder


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small finished recording (1 model, n = 1, no detector)."""
    root = tmp_path_factory.mktemp("finished")
    return SimRecorder()(root, models=1, samples=1, detector=False).run.root


@pytest.fixture
def crashed(finished: Path, tmp_path: Path) -> tuple[RunDir, str]:
    """A copy of it as a kill after its last sample leaves it; and its cassette root digest."""
    target = tmp_path / "runs" / finished.name
    shutil.copytree(finished, target)
    run = RunDir.open(target)
    store = CassetteStore(run.cassettes_dir, writable=False)
    root = store.root_digest()
    lines = [to_json_line(e) for es in store.entries_by_generation().values() for e in es]
    journal = run.cassettes_dir / JOURNAL_DIR
    journal.mkdir(exist_ok=True)
    (journal / "4242-deadbeef.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for path in all_cassette_files(run.cassettes_dir):
        path.unlink()
    manifest = run.load_manifest()
    cassettes = manifest.cassettes.model_copy(update={"root_digest": None}) if manifest.cassettes else None
    run.write_manifest(
        manifest.model_copy(update={"finished_at": None, "cassettes": cassettes, "sample_entries_root": None})
    )
    return run, root


def _folded(run: RunDir, root: str) -> bool:
    """Every journaled entry is in the cassette files and no journal is left."""
    left = list((run.cassettes_dir / JOURNAL_DIR).glob("*.jsonl"))
    return not left and CassetteStore(run.cassettes_dir, writable=False).root_digest() == root


def test_verify_tells_to_resume_with_the_exact_command(crashed: tuple[RunDir, str]) -> None:
    run, _ = crashed
    report = verify_run(run.root)
    failed = {c.what: c.detail for c in report.checks if c.status == "FAIL"}
    assert "holds uncompacted entries (4242-deadbeef.jsonl)" in failed["cassettes journal"]
    assert f"with `--run-id {run.run_id}`), which folds the journal" in failed["cassettes journal"]


def test_cache_rebuild_folds_the_journal_and_indexes_every_entry(
    crashed: tuple[RunDir, str], finished: Path
) -> None:
    run, root = crashed
    expected = len(CassetteStore(finished / "cassettes", writable=False).effective_entries())
    result = CliRunner().invoke(cli, ["cache", "rebuild", str(run.root)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # Before issue 11 this said "indexed 0 entries": an empty index written into the run.
    assert result.output.startswith(f"indexed {expected} entries from {run.cassettes_dir}")
    assert _folded(run, root)


def test_cache_rebuild_refuses_a_folder_without_entries(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["cache", "rebuild", str(tmp_path)])
    assert result.exit_code != 0
    assert f"{tmp_path}: no cassettes here (no *.yaml file under {tmp_path})" in result.output
    assert not (tmp_path.parent / "cache").exists()


def test_cassettes_ls_on_a_journal_only_run_says_how_to_fold_it(crashed: tuple[RunDir, str]) -> None:
    run, _ = crashed
    result = CliRunner().invoke(cli, ["cassettes", "ls", str(run.root)])
    assert result.exit_code == 2
    assert "the entries are still only in the crash journal" in result.output
    assert "resume that run (rerun its command with --run-id)" in result.output


def test_gc_folds_the_journal_then_asks_for_the_resume(crashed: tuple[RunDir, str]) -> None:
    run, root = crashed
    with pytest.raises(StoreError, match=f"has not finished.*--run-id {run.run_id}"):
        plan_gc(run.root)
    assert _folded(run, root)  # nothing the crashed session recorded is lost or left aside


def test_replay_of_an_unsealed_run_asks_for_the_resume_and_writes_nothing(
    crashed: tuple[RunDir, str], tmp_path: Path
) -> None:
    run, _ = crashed
    out = tmp_path / "replays"
    with pytest.raises(StoreError, match=f"has not finished .*resume it first.*--run-id {run.run_id}"):
        asyncio.run(replay_run(run.root, out, clock=FakeClock(), rand=random.Random(0), progress=False))
    assert not out.exists()


def test_replay_stopped_by_sigterm_removes_its_temporary_output(finished: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    # The SIGTERM arrives right after the replay stored its 3rd sample (a real signal to itself).
    env = {**os.environ, "TMPDIR": str(scratch), ENV_VAR: "commit:3@TERM"}
    entry = "from oracleproto.cli.main import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", entry, "replay", str(finished), "--no-progress"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"terminated: replay of {finished.name} stopped; its output was removed"
    )
    assert "Traceback" not in done.stderr
    assert list(scratch.iterdir()) == []
