"""``run``, ``replay`` and ``sim run`` as a user drives them: exit codes, messages, auth abort."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli, main
from oracleproto.dataset.demo import demo_db_path
from oracleproto.errors import AuthError, OracleprotoError
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.execute import RunOptions, execute_run
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.harness import SIM_LLM_KEY, SIM_MODELS, SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store import RunDir
from tests.runner.conftest import read_slots

RUN_ID = "20260102-030405-beef"
SMALL = ("--personas", "1", "--samples", "1", "--no-detector", "--no-report", "--no-progress")


def invoke(*args: str | Path) -> tuple[int, str, str]:
    """Run the ``oracleproto`` group in-process; exit code, stdout, stderr."""
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def invoke_main(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str
) -> tuple[int, str]:
    """Through ``main()`` (the console script), which maps known errors to a message and exit 2."""
    monkeypatch.setattr(sys, "argv", ["oracleproto", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    return int(exit_info.value.code or 0), capsys.readouterr().err


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small recorded run made with ``oracleproto sim run``."""
    root = tmp_path_factory.mktemp("cli")
    code, out, err = invoke("sim", "run", "--runs-root", root, "--run-id", RUN_ID, *SMALL)
    assert code == 0, err
    assert out.strip().endswith(str(root / RUN_ID))
    traffic = next(line for line in err.splitlines() if line.startswith("requests this session: "))
    assert traffic.endswith(" live") and " 0 live" not in traffic  # a fresh recording goes live
    return root / RUN_ID


def test_replay_prints_the_verdict_and_exits_0(recorded: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("replay", recorded, "--out", tmp_path, "--no-progress")
    assert code == 0
    assert "reproduced byte for byte (2/2 checks match)" in out
    assert "db/sim__careful__r5__c4.db" in out and "DIFFERS" not in out
    lines = out.splitlines()
    traffic = next(line for line in lines if line.startswith("requests this session: "))
    total = int(traffic.split()[3])
    assert total > 0 and traffic.endswith(f"; {total} served from cassettes, 0 live")
    saved = next(line for line in lines if line.startswith("a replay makes none of its "))
    # sim/careful reports OpenRouter's usage.cost and so does the detector; Tavily reports none.
    reported = re.search(r"recorded cost \d+\.\d{6} USD \((\d+) of (\d+) calls report their cost\)", saved)
    assert reported is not None, saved
    assert 0 < int(reported.group(1)) < int(reported.group(2))


def test_replay_of_a_tampered_run_exits_1_and_names_the_file(recorded: Path, tmp_path: Path) -> None:
    copy = tmp_path / "runs" / RUN_ID
    shutil.copytree(recorded, copy)
    with sqlite3.connect(copy / "db" / "sim__careful__r5__c4.db") as conn:
        conn.execute("UPDATE run_results SET s0_final_answer_letters = '[\"Z\"]' WHERE rowid = 1")
    conn.close()
    code, out, _ = invoke(
        "replay", RUN_ID, "--runs-root", tmp_path / "runs", "--out", tmp_path / "out", "--no-progress"
    )
    assert code == 1
    assert "did NOT reproduce (1/2 checks match)" in out
    line = next(line for line in out.splitlines() if "sim__careful__r5__c4.db" in line)
    assert "DIFFERS" in line and "char " in line and "Z" in line


def test_replay_of_an_unknown_run_id_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, err = invoke_main(
        capsys, monkeypatch, "replay", "20990101-000000-0000", "--runs-root", str(tmp_path)
    )
    assert code == 2
    assert "20990101-000000-0000" in err and err.startswith("error: ")


def test_replay_without_the_recorded_dataset_names_the_dataset_option(
    recorded: Path,
    tmp_path: Path,
    shared_db: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    args = ("replay", str(recorded), "--dataset", str(shared_db), "--out", str(tmp_path), "--no-progress")
    code, err = invoke_main(capsys, monkeypatch, *args)
    assert code == 2
    assert "--dataset" in err and "source_db hash" in err and str(shared_db) in err
    assert not any(tmp_path.iterdir())  # no partial output


def write_env(path: Path, recorded: Path) -> Path:
    """A .env describing the recorded run's settings (no key: replay needs none)."""
    model, cutoff = SIM_MODELS[0]
    snapshot: dict[str, Any] = json.loads(
        sqlite3.connect(recorded / "db" / "sim__careful__r5__c4.db")
        .execute("SELECT config_snapshot FROM run_meta")
        .fetchone()[0]
    )
    lines = [
        f"MODELS={model}",
        f"MODEL_TRAINING_CUTOFFS={model}={cutoff}",
        "LLM_SEND_SEED=true",
        f"LLM_BASE_URL={snapshot['llm']['base_url']}",
        f"TAVILY_BASE_URL={snapshot['search']['base_url']}",
        "ENABLE_SEARCH_LEAK_FILTER=false",
        "SAMPLING_N=1",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_run_defaults_to_replay_and_re_executes_offline(
    recorded: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    slot_reader: Callable[[Path], dict[Any, dict[str, Any]]],
) -> None:
    # Only the cassettes are given: every slot must be re-executed from them, with no socket.
    root = tmp_path / "runs"
    shutil.copytree(recorded / "cassettes", root / RUN_ID / "cassettes")
    env = write_env(tmp_path / "replay.env", recorded)
    for name in ("ORACLEPROTO_MODE", "MODELS", "SOURCE_DB", "RUNS_ROOT"):
        monkeypatch.delenv(name, raising=False)
    from pytest_socket import disable_socket, enable_socket, socket_allow_hosts

    disable_socket(allow_unix_socket=True)  # asyncio.run's self-pipe is a unix socketpair
    try:
        args = (
            "run",
            "--run-id",
            RUN_ID,
            "--runs-root",
            root,
            "--env-file",
            env,
            "--no-report",
            "--no-progress",
        )
        code, out, err = invoke(*args)
    finally:
        enable_socket()
        socket_allow_hosts(["127.0.0.1", "::1"])
    assert code == 0, err
    assert f"run {RUN_ID}: 16 slots, 16 run now" in err
    assert out.strip() == str(root / RUN_ID)
    manifest = json.loads((root / RUN_ID / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["cassettes"]["mode"] == "replay" and manifest["finished_at"]
    assert slot_reader(root / RUN_ID) == slot_reader(recorded)


def test_a_revoked_key_aborts_with_exit_3_and_the_run_resumes_after(tmp_path: Path) -> None:
    code, _, err = invoke(
        "sim", "run", "--runs-root", tmp_path, "--run-id", RUN_ID, "--revoke-llm-key", *SMALL
    )
    assert code == 3
    assert "401" in err or "auth" in err.lower()
    assert f"--run-id {RUN_ID}" in err and "resumable" in err
    manifest = json.loads((tmp_path / RUN_ID / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["finished_at"] is None
    code, out, err = invoke("sim", "run", "--runs-root", tmp_path, "--run-id", RUN_ID, *SMALL)
    assert code == 0, err
    assert out.strip() == str(tmp_path / RUN_ID)
    manifest = json.loads((tmp_path / RUN_ID / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["finished_at"] is not None


def test_sim_run_then_replay_as_a_user_runs_them(tmp_path: Path) -> None:
    def oracleproto(*args: str) -> subprocess.CompletedProcess[str]:
        entry = "from oracleproto.cli.main import main; main()"
        command = [sys.executable, "-c", entry, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)

    recorded = oracleproto("sim", "run", "--runs-root", str(tmp_path / "runs"), *SMALL)
    assert recorded.returncode == 0, recorded.stderr
    run_dir = Path(recorded.stdout.strip().splitlines()[-1])
    assert run_dir.parent == tmp_path / "runs" and (run_dir / "manifest.json").is_file()
    replayed = oracleproto("replay", str(run_dir), "--out", str(tmp_path / "replayed"), "--no-progress")
    assert replayed.returncode == 0, replayed.stderr
    assert "reproduced byte for byte" in replayed.stdout
    assert (tmp_path / "replayed" / run_dir.name / "manifest.json").read_bytes() == (
        run_dir / "manifest.json"
    ).read_bytes()
    # The same replay on two processes (a spawned worker runs half the questions) as a user runs it.
    shared = oracleproto("replay", str(run_dir), "--processes", "2", "--no-progress")
    assert shared.returncode == 0, shared.stderr
    assert "reproduced byte for byte" in shared.stdout

    def checks(out: str) -> list[str]:
        return [line for line in out.splitlines() if line.endswith((" match", " DIFFERS"))]

    assert checks(shared.stdout) == checks(replayed.stdout) and len(checks(shared.stdout)) >= 2


def test_a_key_revoked_mid_run_keeps_done_samples_and_the_rerun_completes(
    tmp_path: Path, raw_slot_reader: Callable[[Path], dict[Any, dict[str, Any]]]
) -> None:
    # Some latency keeps the run from finishing before the watcher (polling the DB) revokes the key.
    config = SimConfig(seed=0, chat=FaultConfig(latency_ms=20))
    run_dir = tmp_path / RUN_ID
    with Simulator(config) as sim:
        settings = simulated_settings(
            sim, SimRunSpec(models=1, samples=2, runs_root=tmp_path, detector=False)
        )
        options = RunOptions(settings, demo_db_path(), tmp_path, run_id=RUN_ID, progress=False)

        def revoke_after_some_samples() -> None:
            while len(done_slots(run_dir)) < 5:
                time.sleep(0.005)
            revoked = replace(config.chat, revoked_keys=frozenset({SIM_LLM_KEY}))
            sim.handler.config = replace(config, chat=revoked)

        watcher = threading.Thread(target=revoke_after_some_samples, daemon=True)
        watcher.start()
        with pytest.raises(AuthError, match=f"resumable.*--run-id {RUN_ID}"):
            asyncio.run(execute_run(options, clock=SystemClock(), rand=random.Random(0)))
        watcher.join(timeout=60)
    kept = done_slots(run_dir)
    assert 5 <= len(kept) < 32
    assert json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["finished_at"] is None
    code, _, err = invoke(
        "sim",
        "run",
        "--runs-root",
        tmp_path,
        "--run-id",
        RUN_ID,
        "--models",
        "1",
        "--samples",
        "2",
        *SMALL[4:],
    )
    assert code == 0, err
    assert f"{len(kept)} done before this session, {32 - len(kept)} run now" in err
    after = raw_slot_reader(run_dir)
    assert {slot: after[slot] for slot in kept} == kept
    assert all(c["created_at"] is not None and c["error"] is None for c in after.values())


def done_slots(run_dir: Path) -> dict[Any, dict[str, Any]]:
    """Raw cells of the slots done so far (empty before the schema exists)."""
    try:
        slots = read_slots(run_dir)
    except (sqlite3.OperationalError, OracleprotoError):
        return {}
    return {k: c for k, c in slots.items() if c["created_at"] is not None and c["error"] is None}


@pytest.mark.parametrize(
    ("stop", "status", "label", "reason"),
    [
        (signal.SIGINT, 130, "interrupted", "interrupted"),
        # docker stop, a cancelled CI job, a cluster scheduler: handled like Ctrl-C (issue 11).
        (signal.SIGTERM, 143, "terminated (SIGTERM)", "terminated"),
    ],
    ids=["ctrl-c", "sigterm"],
)
def test_a_signal_stops_the_run_resumably_and_the_rerun_completes_it(
    tmp_path: Path, stop: signal.Signals, status: int, label: str, reason: str
) -> None:
    # The child restores Python's SIGINT handler: a test runner started in the background
    # inherits SIGINT ignored, and the child would inherit that too.
    entry = (
        "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from oracleproto.cli.main import main; main()"
    )
    args = ["sim", "run", "--runs-root", str(tmp_path), "--personas", "1", "--samples", "2", "--no-detector"]
    args += ["--no-report", "--no-progress", "--latency-ms", "50"]
    proc = subprocess.Popen(  # no --run-id: the message must name the id the run drew
        [sys.executable, "-c", entry, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 120
        while not any(done_slots(run) for run in tmp_path.glob("2*")):
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the run did not start"
            time.sleep(0.01)
        proc.send_signal(stop)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    (run_dir,) = tmp_path.glob("2*")
    assert proc.returncode == status, err
    assert err.strip().splitlines()[-1] == (
        f"{label}: run {run_dir.name} stopped and is resumable: rerun with --run-id {run_dir.name} "
        "(finished samples are kept)"
    )
    assert "Traceback" not in err
    log = (run_dir / "logs" / f"{run_dir.name}.log").read_text(encoding="utf-8")
    aborted = [json.loads(line) for line in log.splitlines() if '"run_aborted"' in line]
    assert [e["reason"] for e in aborted] == [reason]
    assert not (run_dir / "cassettes" / ".journal").is_dir() or not any(
        (run_dir / "cassettes" / ".journal").iterdir()
    )  # a clean stop: the journal was folded into the cassettes on the way out
    kept = done_slots(run_dir)
    assert 0 < len(kept) < 32
    code, _, err = invoke(*args, "--run-id", run_dir.name)
    assert code == 0, err
    after = read_slots(run_dir)
    assert {slot: after[slot] for slot in kept} == kept
    assert all(c["created_at"] is not None and c["error"] is None for c in after.values())


def test_a_run_being_written_by_another_process_is_refused(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path, RUN_ID)
    with run.writer_lock():
        result = CliRunner().invoke(
            cli, ["sim", "run", "--runs-root", str(tmp_path), "--run-id", RUN_ID, *SMALL]
        )
    assert result.exit_code == 2
    assert f"run {RUN_ID} is being written by another process (pid {os.getpid()}" in result.stderr
    assert not run.manifest_path.exists()  # refused before anything was written
