"""Kill a recording at every named phase boundary, rerun the same command, get the uninterrupted run.

Deterministic, not timed: each recording is a real ``oracleproto sim run`` subprocess with
``ORACLEPROTO_TEST_KILL_AT=<phase>[:<n>]@<action>`` (``oracleproto/primitives/killpoints.py``), so the process
dies (SIGKILL), receives SIGTERM or hits a full disk at exactly that boundary. For each point:
the process stopped where intended (the on-disk state says so), the same command (rerun in this
process through click) completes the run, the result equals an uninterrupted recording (DB
logical dumps with wall-clock stamps masked, per-sample entry keys, cassette keys, manifest minus
its volatile fields, analysis files, no stray files), and ``verify`` and ``replay`` pass on it.

SIGKILL runs on every phase; SIGTERM on a representative subset (start, mid-run, mid-fold);
ENOSPC on the fold, the write that needs more space than the finished run.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.cli.run import write_run_analysis
from oracleproto.errors import OracleprotoError
from oracleproto.primitives.clock import FakeClock
from oracleproto.primitives.killpoints import ENV_VAR
from oracleproto.runner.replay import ReplayReport, replay_run
from oracleproto.store import RunDir, logical_dump
from oracleproto.store.sample_entries import read_sample_keys
from oracleproto.transport.store import CassetteStore
from oracleproto.verify.findings import VerifyReport
from oracleproto.verify.run import verify_run

RUN_ID = "20260101-000000-abcd"
#: One model, n = 1, no detector: 16 slots, the smallest run that has every phase.
ARGS = ("--personas", "1", "--samples", "1", "--seed", "0", "--no-detector", "--no-progress")
SLOTS = 16
#: Phases whose scenarios run with the analysis pass (the others pass --no-report to stay fast).
REPORTED = {"analysis", "analysis-swap"}
#: A hang, not a speed assertion.
DEADLINE_S = 300.0

#: ``fold:1`` (the fold about to write its first file) leaves the same files as ``last-sample``.
KILL = ["manifest", "commit:8", "last-sample", "fold:2", "fold-write", "folded", "finished", "analysis"]
KILL += ["analysis-swap"]
#: SIGTERM is acted on at the run's next await: after the fold only synchronous work is left (the
#: manifest, the analysis pass), so a SIGTERM there lets the run finish; the subset stops before.
TERM_POINTS = [f"{p}@TERM" for p in ("manifest", "commit:8", "fold:2")]
ENOSPC_POINTS = ["fold:2@ENOSPC"]
POINTS = [f"{p}@KILL" for p in KILL] + TERM_POINTS + ENOSPC_POINTS


def command(runs_root: Path, *, report: bool) -> list[str]:
    """``oracleproto sim run`` through the console entry point, in a fresh interpreter."""
    entry = "from oracleproto.cli.main import main; main()"
    extra = () if report else ("--no-report",)
    head = [sys.executable, "-c", entry, "sim", "run", "--runs-root", str(runs_root), "--run-id", RUN_ID]
    return [*head, *ARGS, *extra]


def run_cli(runs_root: Path, *, report: bool, kill_at: str | None = None) -> subprocess.CompletedProcess[str]:
    """One invocation of the command, with or without a kill point."""
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    if kill_at is not None:
        env[ENV_VAR] = kill_at
    return subprocess.run(
        command(runs_root, report=report),
        capture_output=True,
        text=True,
        env=env,
        timeout=DEADLINE_S,
        check=False,
    )


@dataclass
class Scenario:
    """One interrupted recording and its resume."""

    point: str
    root: Path
    killed: subprocess.CompletedProcess[str] | None = None
    #: The rerun of the same command (exit code, stdout, stderr).
    resumed: subprocess.CompletedProcess[str] | None = None
    #: What the run directory looked like right after the interruption.
    after_kill: dict[str, Any] = field(default_factory=dict)
    verify: VerifyReport | None = None
    replay: ReplayReport | None = None
    replay_error: str | None = None

    @property
    def phase(self) -> str:
        """The phase name without count and action."""
        return self.point.split("@")[0].split(":")[0]

    @property
    def action(self) -> str:
        """KILL, TERM or ENOSPC."""
        return self.point.split("@")[1]

    @property
    def report(self) -> bool:
        """Whether this scenario's command runs the analysis pass."""
        return self.phase in REPORTED

    @property
    def run_root(self) -> Path:
        """The run directory."""
        return self.root / RUN_ID


def done_count(run_root: Path) -> int:
    """Samples stored (any DB of the run); 0 when no DB exists yet."""
    total = 0
    for db in sorted((run_root / "db").glob("*.db")):
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            total += conn.execute("SELECT COUNT(s0_created_at) FROM run_results").fetchone()[0]
        except sqlite3.OperationalError:
            pass  # killed before the schema was created
        finally:
            conn.close()
    return total


def db_finished(run_root: Path) -> bool:
    """True when every DB's run_meta is stamped finished."""
    dbs = sorted((run_root / "db").glob("*.db"))
    stamps = []
    for db in dbs:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        stamps.append(conn.execute("SELECT finished_at FROM run_meta").fetchone()[0])
        conn.close()
    return bool(dbs) and all(stamps)


def disk_state(run_root: Path) -> dict[str, Any]:
    """What an interruption left: stored samples, journal bytes, cassette files, leftovers, stamps."""
    cassettes = run_root / "cassettes"
    manifest = json.loads((run_root / "manifest.json").read_text(encoding="utf-8"))
    return {
        "done": done_count(run_root),
        "journal_bytes": sum(p.stat().st_size for p in (cassettes / ".journal").glob("*.jsonl")),
        "yaml": sorted(str(p.relative_to(cassettes)) for p in cassettes.rglob("*.yaml")),
        "temps": sorted(p.name for p in cassettes.rglob("*.tmp")),
        "analysis_leftovers": sorted(p.name for p in run_root.glob(".analysis.*")),
        "analysis_files": sorted(p.name for p in (run_root / "analysis").glob("*"))
        if (run_root / "analysis").is_dir()
        else None,
        "manifest_finished": manifest["finished_at"] is not None,
        "db_finished": db_finished(run_root),
    }


def interrupt(scenario: Scenario) -> Scenario:
    """Run the recording with its kill point (a subprocess) and note the state it left."""
    scenario.killed = run_cli(scenario.root, report=scenario.report, kill_at=scenario.point)
    scenario.after_kill = disk_state(scenario.run_root)
    return scenario


def resume_and_check(scenario: Scenario, scratch: Path) -> None:
    """Rerun the same command, then verify and replay the result.

    In this process (the command through click, as ``main()`` runs it): a fresh interpreter per
    resume would double the scenarios' CPU time, and what must cross a process boundary is the
    interruption, not the rerun.
    """
    args = command(scenario.root, report=scenario.report)[3:]
    result = CliRunner().invoke(cli, args)
    err = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        err += f"\n{type(result.exception).__name__}: {result.exception}"  # fails this scenario only
    scenario.resumed = subprocess.CompletedProcess(args, result.exit_code, result.stdout, err)
    if result.exit_code != 0:
        return
    scenario.verify = verify_run(scenario.run_root)
    try:
        scenario.replay = asyncio.run(
            replay_run(
                scenario.run_root,
                scratch / scenario.point.replace(":", "-").replace("@", "-"),
                clock=FakeClock(),
                rand=random.Random(0),
                progress=False,
                after=write_run_analysis if scenario.report else None,
            )
        )
    except OracleprotoError as exc:  # fails this scenario only
        scenario.replay_error = str(exc)


@pytest.fixture(scope="module")
def killpoints_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("killpoints")


@pytest.fixture(scope="module")
def uninterrupted(killpoints_dir: Path) -> Path:
    """The same recording, never interrupted (with its analysis pass)."""
    done = run_cli(killpoints_dir / "uninterrupted", report=True)
    assert done.returncode == 0, done.stderr
    return killpoints_dir / "uninterrupted" / RUN_ID


@pytest.fixture(scope="module")
def played() -> dict[str, Scenario]:
    """Each point played once per worker: interrupted, resumed, verified and replayed."""
    return {}


@pytest.fixture
def scenario(point: str, played: dict[str, Scenario], killpoints_dir: Path) -> Scenario:
    """The point's scenario, played on first use.

    The tests take ``point`` with ``scope="module"``, so pytest runs every test of one point
    together: when xdist shares this module's tests among workers, a worker plays only the points
    of the tests it runs, and a point is rarely played twice. In a shuffled order each point is
    still played once.
    """
    if point not in played:
        fresh = interrupt(Scenario(point, killpoints_dir / point.replace(":", "-").replace("@", "-")))
        resume_and_check(fresh, killpoints_dir / "replays")
        played[point] = fresh
    return played[point]


# -- comparison with the uninterrupted run ---------------------------------------------------------

_PORT = re.compile(r"127\.0\.0\.1:\d+")
#: Columns stamped from the wall clock (or measured), which differ between any two recordings.
_STAMPS = {"imported_at", "applied_at", "started_at", "finished_at"}
_PER_SAMPLE_STAMPS = re.compile(r"s\d+_(created_at|latency_ms)")
_LATENCY_KEYS = {"latency_ms", "detector_latency_ms"}


def _strip_latency(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_latency(v) for k, v in value.items() if k not in _LATENCY_KEYS}
    if isinstance(value, list):
        return [_strip_latency(v) for v in value]
    return value


def masked_dump(db: Path) -> list[str]:
    """``logical_dump`` with the wall-clock cells masked (present/absent kept) and the simulator port."""
    out: list[str] = []
    columns: list[str] = []
    for line in logical_dump(db).splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "columns":
            columns = [c[0] for c in json.loads(rest)]
        if kind != "row":
            out.append(line)
            continue
        row = dict(zip(columns, json.loads(rest), strict=True))
        for name, value in row.items():
            if name in _STAMPS or _PER_SAMPLE_STAMPS.fullmatch(name):
                row[name] = value is not None
            elif isinstance(value, str) and value[:1] in "[{" and re.fullmatch(r"s\d+_step_metrics", name):
                row[name] = _strip_latency(json.loads(value))
            elif isinstance(value, str):
                row[name] = _PORT.sub("127.0.0.1:PORT", value)
        out.append("row " + json.dumps(row, sort_keys=True))
    return sorted(out)


def run_files(run_root: Path) -> list[str]:
    """Every file of the run directory except the session log and lock files."""
    skip = {"logs", ".lock"}
    return sorted(
        str(p.relative_to(run_root))
        for p in run_root.rglob("*")
        if p.is_file()
        and not skip & set(p.relative_to(run_root).parts)
        and not p.name.endswith(("-wal", "-shm"))
    )


def comparable_manifest(run_root: Path) -> dict[str, Any]:
    """The manifest minus what legitimately differs between recordings (times, entry digests)."""
    volatile = {"started_at", "finished_at", "cassettes", "sample_entries_root"}
    data = json.loads((run_root / "manifest.json").read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if k not in volatile}


def comparable_summary(run_root: Path) -> Any:
    """summary.json minus what measured latencies feed (tool_use_dependence, avg_latency_ms)."""
    data = json.loads((run_root / "analysis" / "summary.json").read_text(encoding="utf-8"))
    for model in data["models"].values():
        model.pop("tool_use_dependence", None)
        model.pop("avg_latency_ms", None)
    return data


def comparable_model_summary(run_root: Path) -> list[dict[str, str]]:
    """per_model_summary.csv rows without the measured ``avg_latency_ms`` column."""
    text = (run_root / "analysis" / "per_model_summary.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows and all("avg_latency_ms" in row for row in rows)  # the masked column exists
    return [{k: v for k, v in row.items() if k != "avg_latency_ms"} for row in rows]


def differences(run_root: Path, baseline: Path, *, report: bool) -> list[str]:
    """Every way the run differs from the uninterrupted one (empty = equal)."""
    found: list[str] = []
    run, base = RunDir.open(run_root), RunDir.open(baseline)
    manifest = run.load_manifest()
    if manifest.finished_at is None or not manifest.sample_entries_root or not manifest.cassettes:
        found.append("manifest not sealed")
    if comparable_manifest(run_root) != comparable_manifest(baseline):
        found.append("manifest")
    for slug, path in run.model_db_paths(manifest).items():
        twin = base.model_db_paths(base.load_manifest())[slug]
        if masked_dump(path) != masked_dump(twin):
            found.append(f"db {path.name}")
    if read_sample_keys(run.model_db_paths(manifest)) != read_sample_keys(
        base.model_db_paths(base.load_manifest())
    ):
        found.append("per-sample entry keys")
    keys = [e.key for e in CassetteStore(run.cassettes_dir, writable=False).effective_entries()]
    if keys != [e.key for e in CassetteStore(base.cassettes_dir, writable=False).effective_entries()]:
        found.append("cassette entry keys")
    files = run_files(run_root)
    expected = run_files(baseline)
    if not report:
        expected = [f for f in expected if not f.startswith("analysis/")]
    if files != expected:
        found.append(
            f"files: extra {sorted(set(files) - set(expected))}, missing {sorted(set(expected) - set(files))}"
        )
    if report:
        for name in sorted(p.name for p in base.analysis_dir.iterdir()):
            if name == "summary.json":
                same = comparable_summary(run_root) == comparable_summary(baseline)
            elif name == "per_model_summary.csv":
                same = comparable_model_summary(run_root) == comparable_model_summary(baseline)
            else:
                same = (run.analysis_dir / name).read_bytes() == (base.analysis_dir / name).read_bytes()
            if not same:
                found.append(f"analysis/{name}")
    return found


# -- the tests -------------------------------------------------------------------------------------


@pytest.mark.parametrize("point", POINTS, scope="module")
def test_the_process_stopped_where_the_kill_point_says(scenario: Scenario) -> None:
    killed, state = scenario.killed, scenario.after_kill
    assert killed is not None
    if scenario.action == "KILL":
        assert killed.returncode == -9, killed.stderr
    expected: dict[str, Any] = {
        "manifest": {"done": 0, "yaml": [], "journal_bytes": 0},
        "last-sample": {"done": SLOTS, "yaml": [], "manifest_finished": False},
        "fold": {"done": SLOTS, "manifest_finished": False, "db_finished": False},
        "fold-write": {"done": SLOTS, "yaml": [], "manifest_finished": False},
        "folded": {"done": SLOTS, "yaml": ["llm/sim__careful__r5__c4.yaml", "search.yaml"]},
        "finished": {"done": SLOTS, "journal_bytes": 0, "db_finished": True, "manifest_finished": False},
        "analysis": {"manifest_finished": True, "analysis_files": []},
        "analysis-swap": {"manifest_finished": True, "analysis_files": None},
    }.get(scenario.phase, {})
    if scenario.action == "KILL":
        assert {k: state[k] for k in expected} == expected, state
    if scenario.point == "commit:8@KILL":
        assert state["done"] == 8
    if scenario.phase in ("last-sample", "fold", "fold-write", "folded") and scenario.action == "KILL":
        # The state issue 11 found unresumable: every entry only (or also) in the journal.
        assert state["journal_bytes"] > 0
    if scenario.point == "fold:2@KILL":
        assert state["yaml"] == ["llm/sim__careful__r5__c4.yaml"]  # mid-rewrite: one of two files
    if scenario.point == "fold-write@KILL":
        assert len(state["temps"]) == 1
    if scenario.point == "analysis@KILL":
        assert [n.split("-")[0] for n in state["analysis_leftovers"]] == [".analysis.tmp"]
    if scenario.point == "analysis-swap@KILL":
        # Between the two renames: the old folder moved aside, the new one still in its temp.
        assert [n.split("-")[0] for n in state["analysis_leftovers"]] == [".analysis.old", ".analysis.tmp"]


@pytest.mark.parametrize("point", TERM_POINTS, scope="module")
def test_a_sigterm_stops_the_run_resumably_with_the_resume_command(scenario: Scenario) -> None:
    killed = scenario.killed
    assert killed is not None and "Traceback" not in killed.stderr
    assert killed.returncode == 143, killed.stderr
    assert killed.stderr.strip().splitlines()[-1] == (
        f"terminated (SIGTERM): run {RUN_ID} stopped and is resumable: rerun with --run-id {RUN_ID} "
        "(finished samples are kept)"
    )
    log = (scenario.run_root / "logs" / f"{RUN_ID}.log").read_text(encoding="utf-8")
    aborted = [json.loads(line) for line in log.splitlines() if '"run_aborted"' in line]
    assert [e["reason"] for e in aborted] == ["terminated"]
    assert not scenario.after_kill["manifest_finished"]


@pytest.mark.parametrize("point", ENOSPC_POINTS, scope="module")
def test_a_full_disk_during_the_fold_says_what_to_free_and_that_the_run_is_resumable(
    scenario: Scenario,
) -> None:
    killed = scenario.killed
    assert killed is not None
    assert killed.returncode == 2, killed.stderr
    assert "Traceback" not in killed.stderr
    err = killed.stderr
    assert err.startswith(f"error: no space left on the device holding {scenario.run_root / 'cassettes'}")
    assert re.search(r"it needs about \d+\.\d MiB free there; free at least that much", err)
    assert "every recorded entry stays in" in err
    assert err.strip().splitlines()[-1] == (
        f"run {RUN_ID} stopped and is resumable: free the space, then rerun with --run-id {RUN_ID} "
        "(finished samples are kept)"
    )
    assert scenario.after_kill["journal_bytes"] > 0  # nothing was lost
    log = (scenario.run_root / "logs" / f"{RUN_ID}.log").read_text(encoding="utf-8")
    assert '"reason": "disk_full"' in log


@pytest.mark.parametrize("point", POINTS, scope="module")
def test_rerunning_the_same_command_yields_the_uninterrupted_run(
    scenario: Scenario, uninterrupted: Path
) -> None:
    resumed = scenario.resumed
    assert resumed is not None and resumed.returncode == 0, resumed.stderr if resumed else None
    assert resumed.stdout.strip().endswith(RUN_ID)
    assert differences(scenario.run_root, uninterrupted, report=scenario.report) == []


@pytest.mark.parametrize("point", POINTS, scope="module")
def test_verify_and_replay_pass_on_the_resumed_run(scenario: Scenario) -> None:
    assert scenario.replay_error is None
    assert scenario.verify is not None and scenario.replay is not None
    assert [(c.what, c.detail) for c in scenario.verify.checks if c.status == "FAIL"] == []
    assert scenario.verify.ok
    assert [(c.what, c.detail) for c in scenario.replay.checks if not c.ok] == []
