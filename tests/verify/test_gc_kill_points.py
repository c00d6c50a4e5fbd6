"""``cassettes gc --apply`` stopped at every step of its switch: one seal always, a rerun ends the job.

Each scenario is a real ``oracleproto cassettes gc RUN --apply`` subprocess with
``ORACLEPROTO_TEST_KILL_AT=<phase>[:<n>]@<action>`` (``oracleproto/primitives/killpoints.py``): SIGKILL at
every step (each staged file, the commit, each file moved into place, the cleanup), and SIGINT
(Ctrl-C) before the commit, at it and during the move. For each, on the files left behind:

- before the commit, the published files are the old sealed run's, byte for byte;
- after it, they are the old or new files plus a committed ``.switch/`` (kill), or exactly the new
  sealed run (Ctrl-C is held until the switch is done);
- ``verify`` passes (finishing a committed switch first), and a rerun of ``gc --apply`` leaves
  exactly the files an uninterrupted ``gc --apply`` writes, nothing staged, nothing left to collect.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from oracleproto.cli.exits import EXIT_INTERRUPTED
from oracleproto.cli.main import cli
from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import FakeClock
from oracleproto.primitives.killpoints import ENV_VAR
from oracleproto.providers import OpenAIChatClient
from oracleproto.settings.model import LLMSettings
from oracleproto.sim import Simulator
from oracleproto.sim.harness import SIM_LLM_KEY
from oracleproto.store import RunDir
from oracleproto.transport import CassetteStore, RecordReplay
from oracleproto.verify import verify_run
from oracleproto.verify.attest import published_files, write_attestation
from oracleproto.verify.gc import plan_gc
from oracleproto.verify.switch import COMMITTED_DIR, STAGING_DIR
from tests.runner.conftest import SimRecorder

#: The collection rewrites one cassette file, manifest.json and attestation.json: three staged files.
STAGED = 3
KILL = [f"switch-stage:{n}" for n in range(1, STAGED + 1)] + ["switch-commit"]
KILL += [f"switch-move:{n}" for n in range(1, STAGED + 1)] + ["switch-moved"]
INT = ["switch-stage:2", "switch-commit", "switch-move:2"]
POINTS = [f"{p}@KILL" for p in KILL] + [f"{p}@INT" for p in INT]
COMMITTED_PHASES = {"switch-move", "switch-moved"}
DEADLINE_S = 300.0


async def _stray_call(cassettes: Path, base_url: str) -> None:
    """One main-LLM call for a sample the run never stored (what a session with other settings leaves)."""
    clock = FakeClock()
    llm = LLMSettings.from_values({"base_url": base_url + "/v1", "send_seed": True})
    cache = RecordReplay(cassettes, clock=clock, mode="record")
    async with cache, httpx.AsyncClient(transport=cache.transport("llm")) as http:
        chat = OpenAIChatClient(http, llm, clock, api_key=SIM_LLM_KEY)
        with call_context(CallContext("sim/careful::r5::c4", "demo-01", 7)):
            await chat.complete("sim/careful", [{"role": "user", "content": "a prompt nobody kept"}], [])


def snapshot(root: Path) -> dict[str, bytes]:
    """Every published file of the run (the staged folders are not published)."""
    return {rel: (root / rel).read_bytes() for rel in published_files(root)}


@dataclass(frozen=True)
class Sealed:
    """The sealed run with garbage, and its files before and after an uninterrupted collection."""

    template: Path
    old: dict[str, bytes]
    new: dict[str, bytes]


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Sealed:
    base = tmp_path_factory.mktemp("gc-kill")
    # No analysis pass: verify would regenerate its plots in every scenario; the seal is the point here.
    run = SimRecorder()(base / "runs", models=1, samples=1, detector=False).run
    with Simulator() as sim:
        asyncio.run(_stray_call(run.cassettes_dir, sim.base_url))
    # Sealed with the stray entry in it (its owner sealed the run as it was): it verifies.
    manifest = run.load_manifest()
    assert manifest.cassettes is not None
    root = CassetteStore(run.cassettes_dir, writable=False).root_digest()
    run.write_manifest(
        manifest.model_copy(update={"cassettes": manifest.cassettes.model_copy(update={"root_digest": root})})
    )
    write_attestation(run.root)
    report = verify_run(run.root)
    assert report.ok, report.failures
    reference = base / "reference" / run.run_id
    shutil.copytree(run.root, reference)
    done = CliRunner().invoke(cli, ["cassettes", "gc", str(reference), "--apply"])
    assert done.exit_code == 0, done.output
    assert verify_run(reference).ok
    new = snapshot(reference)
    assert new != snapshot(run.root) and set(new) == set(snapshot(run.root))
    return Sealed(run.root, snapshot(run.root), new)


def _interrupted(template: Path, point: str, where: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    run_root = where / template.name
    shutil.copytree(template, run_root)
    env = {**{k: v for k, v in os.environ.items() if k != ENV_VAR}, ENV_VAR: point}
    # The child restores Python's SIGINT handler (a backgrounded test runner passes SIGINT ignored,
    # and a Ctrl-C before the commit would then be ignored instead of stopping the switch).
    entry = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from oracleproto.cli.main import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", entry, "cassettes", "gc", str(run_root), "--apply"],
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE_S,
        check=False,
    )
    return run_root, done


@pytest.fixture(scope="module")
def interrupted(
    sealed: Sealed, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, tuple[Path, subprocess.CompletedProcess[str]]]:
    base = tmp_path_factory.mktemp("gc-points")
    folders = {p: base / p.replace(":", "-").replace("@", "-") for p in POINTS}
    with ThreadPoolExecutor(max_workers=3) as lanes:
        futures = {p: lanes.submit(_interrupted, sealed.template, p, folders[p]) for p in POINTS}
        return {p: f.result() for p, f in futures.items()}


@pytest.mark.parametrize("point", POINTS)
def test_gc_stopped_anywhere_keeps_one_seal_and_a_rerun_completes_it(
    point: str,
    sealed: Sealed,
    interrupted: dict[str, tuple[Path, subprocess.CompletedProcess[str]]],
    tmp_path: Path,
) -> None:
    killed, done = interrupted[point]
    run_root = tmp_path / killed.name  # a copy: the other tests start from the same killed state
    shutil.copytree(killed, run_root)
    where, action = point.split("@")
    phase = where.split(":")[0]
    committed = phase in COMMITTED_PHASES
    if action == "KILL":
        assert done.returncode == -9, (done.returncode, done.stderr)
    else:
        assert done.returncode == EXIT_INTERRUPTED, (done.returncode, done.stderr)
        assert "Traceback" not in done.stderr
    left = snapshot(run_root)
    if not committed:
        assert left == sealed.old  # nothing switched: the old sealed run, byte for byte
        assert not (run_root / COMMITTED_DIR).exists()
        assert (run_root / STAGING_DIR).exists() == (action == "KILL")  # Ctrl-C cleans up at once
    elif action == "INT":
        assert left == sealed.new and not (run_root / COMMITTED_DIR).exists()  # Ctrl-C waited for the switch
    else:
        assert (run_root / COMMITTED_DIR).is_dir()  # the next command finishes it
        assert all(left[rel] in (sealed.old[rel], sealed.new[rel]) for rel in left)

    report = verify_run(run_root)
    assert report.ok, report.failures
    finished = [c for c in report.checks if c.what == "interrupted maintenance"]
    assert [c.detail for c in finished] == (
        ["finished an interrupted `cassettes gc --apply` first (its new cassettes and seal are now in place)"]
        if committed and action == "KILL"
        else []
    )
    if committed:
        assert snapshot(run_root) == sealed.new

    again = CliRunner().invoke(cli, ["cassettes", "gc", str(run_root), "--apply"])
    assert again.exit_code == 0, again.output
    assert snapshot(run_root) == sealed.new
    assert not (run_root / COMMITTED_DIR).exists() and not (run_root / STAGING_DIR).exists()
    assert plan_gc(run_root).unreachable == ()  # and it verifies: the reference's files did


def test_a_rerun_of_gc_finishes_a_committed_switch_and_says_so(
    sealed: Sealed, interrupted: dict[str, tuple[Path, subprocess.CompletedProcess[str]]], tmp_path: Path
) -> None:
    run_root = tmp_path / sealed.template.name
    shutil.copytree(interrupted["switch-move:2@KILL"][0], run_root)
    assert (run_root / COMMITTED_DIR).is_dir()
    result = CliRunner().invoke(cli, ["cassettes", "gc", str(run_root), "--apply"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        "finished an interrupted `cassettes gc --apply`: its rewritten cassettes and the new seal "
        "(manifest.json, attestation.json) are now in place\n0 of "
    )
    assert snapshot(run_root) == sealed.new


def test_verify_of_a_read_only_copy_names_the_command_that_finishes_the_switch(
    sealed: Sealed, interrupted: dict[str, tuple[Path, subprocess.CompletedProcess[str]]], tmp_path: Path
) -> None:
    run_root = tmp_path / sealed.template.name
    shutil.copytree(interrupted["switch-move:1@KILL"][0], run_root)

    def refuse(self: RunDir) -> None:
        raise PermissionError(13, "Permission denied", str(self.root / ".lock"))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RunDir, "writer_lock", refuse)
        report = verify_run(run_root)
    assert not report.ok
    (check,) = [c for c in report.checks if c.what == "interrupted maintenance"]
    assert "an interrupted `cassettes gc --apply` is committed but not finished" in check.detail
    assert f"rerun `oracleproto cassettes gc {run_root} --apply` where the run is writable" in check.detail
    assert (run_root / COMMITTED_DIR).is_dir()  # nothing was moved
