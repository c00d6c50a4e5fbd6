"""A run recorded with a harness profile: what it records, replay byte for byte, resume refusals."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from oracleproto.cli.run import write_run_analysis
from oracleproto.errors import StoreError
from oracleproto.primitives.hashing import sha256_16
from oracleproto.profile import builtin_profile, load_profile, profile_fingerprint
from oracleproto.runner.run_texts import PROFILE_DATA_KEY, PROFILE_KEY, recorded_run_texts
from oracleproto.settings.model import Settings
from oracleproto.sim.harness import SimRunSpec, simulated_settings
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.store import Manifest
from tests.conftest import SHARED

EARLIER = SHARED / "fixtures" / "earlier-harness" / "earlier-harness.profile.json"
RUN_ID = "20260301-120000-0a1f"

pytestmark = pytest.mark.slow


def _settings(sim: Simulator, runs_root: Path, profile: Path | None) -> Settings:
    settings = simulated_settings(sim, SimRunSpec(models=2, samples=1, runs_root=runs_root))
    run = settings.run.model_copy(update={"harness_profile": profile, "question_limit": 4})
    # No seed: the earlier harness sends none, and a resume with another profile changes nothing else.
    llm = settings.llm.model_copy(update={"send_seed": False})
    return settings.model_copy(update={"run": run, "llm": llm})


def _snapshot(run_dir: Path) -> dict[str, Any]:
    db = next((run_dir / "db").glob("*.db"))
    with closing(sqlite3.connect(db)) as conn:
        raw = conn.execute("SELECT config_snapshot FROM run_meta").fetchone()[0]
    snapshot: dict[str, Any] = json.loads(raw)
    return snapshot


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run recorded against the simulator with the earlier implementation's profile."""
    if not EARLIER.exists():
        pytest.fail(f"{EARLIER} is missing: tests need ../shared beside the repository")
    from tests.runner.conftest import record_with

    runs_root = tmp_path_factory.mktemp("profile-runs")
    with Simulator(SimConfig(seed=2)) as sim:
        record_with(_settings(sim, runs_root, EARLIER), runs_root, RUN_ID, after=write_run_analysis)
    return runs_root / RUN_ID


def test_the_run_records_its_profile_everywhere(earlier_run: Path) -> None:
    profile = load_profile(EARLIER)
    fingerprint = profile_fingerprint(profile)
    manifest = Manifest.load(earlier_run / "manifest.json")
    assert manifest.harness_profile is not None
    assert (manifest.harness_profile.name, manifest.harness_profile.fingerprint) == (
        "earlier-harness",
        fingerprint,
    )
    snapshot = _snapshot(earlier_run)
    assert snapshot[PROFILE_KEY] == {
        "name": "earlier-harness",
        "fingerprint": fingerprint,
        "base_fingerprint": fingerprint,
    }
    assert PROFILE_DATA_KEY in snapshot
    assert recorded_run_texts(snapshot).profile == profile
    header = (earlier_run / "analysis" / "table3_overall.md").read_text(encoding="utf-8").splitlines()[2]
    assert header.endswith(f"harness profile: `earlier-harness` ({fingerprint})")


def test_the_earlier_profile_sends_its_own_bytes(earlier_run: Path) -> None:
    """The stored trace holds the earlier harness's texts: its status lines and tool payloads."""
    # Every model's DB: one persona of the two answers each question in four steps and is never
    # sent an injection, and which DB a directory listing gives first depends on the filesystem.
    traces = []
    for db in sorted((earlier_run / "db").glob("*.db")):
        with closing(sqlite3.connect(db)) as conn:
            rows = conn.execute("SELECT s0_messages_trace FROM run_results").fetchall()
        traces += [json.loads(row[0]) for row in rows if row[0]]
    texts = [m.get("content") or "" for trace in traces for m in trace]
    # The earlier harness's texts, read from its profile (never copied here): its budget block opens
    # every prompt, and its status header's wording is in the injected messages.
    raw = json.loads(EARLIER.read_text(encoding="utf-8"))
    budget = next(b for b in raw["protocols"]["blocks"] if b["name"] == "budget")["text"].split("\n")[0]
    header = raw["texts"]["status_header"].split("{{steps_left_including_current}}")[1].split("{{")[0]
    assert all(budget in trace[0]["content"] for trace in traces)
    assert any(header in t for t in texts)
    tool_payloads = [json.loads(m["content"]) for trace in traces for m in trace if m.get("role") == "tool"]
    assert tool_payloads and all("status" not in p or "error" in p for p in tool_payloads)
    assert all(list(p)[:1] in (["results"], ["error"]) for p in tool_payloads)


def test_it_replays_byte_for_byte_and_verifies(earlier_run: Path, tmp_path: Path) -> None:
    from tests.runner.conftest import replay_offline

    report = replay_offline(earlier_run, tmp_path / "replayed", analysis=True)
    assert report.ok, [c for c in report.checks if not c.ok]
    from oracleproto.verify.target import verify_path

    verdict = verify_path(earlier_run, dataset=None)
    named = [c for c in verdict.checks if c.what.startswith("harness profile")]
    assert named and named[0].status == "pass"
    assert named[0].what == f"harness profile: earlier-harness ({profile_fingerprint(load_profile(EARLIER))})"
    protocols = [c for c in verdict.checks if c.what == "run_meta protocol texts ↔ hashes"]
    assert [c.ok for c in protocols] == [True]


def test_verify_hashes_the_protocol_texts_by_the_profiles_framed_rule(
    earlier_run: Path, tmp_path: Path
) -> None:
    """The earlier profile hashes a block framed (§11): the bare text's hash is not the recorded one."""
    from oracleproto.verify.target import verify_path

    run = tmp_path / earlier_run.name
    shutil.copytree(earlier_run, run)
    (run / "attestation.json").unlink(missing_ok=True)  # a seal would refuse the edit first
    text, digest = _reflection(run)
    assert text is not None and digest != sha256_16(text)  # the run has reflection on, framed
    for db in (run / "db").glob("*.db"):
        with closing(sqlite3.connect(db)) as conn, conn:
            conn.execute("UPDATE run_meta SET reflection_protocol_hash = ?", (sha256_16(text),))
    verdict = verify_path(run, dataset=None)
    (check,) = [c for c in verdict.checks if c.what == "run_meta protocol texts ↔ hashes"]
    assert not check.ok
    assert f"is not its text's hash under the profile's 'framed' rule ({digest})" in check.detail


def _reflection(run: Path) -> tuple[str | None, str | None]:
    db = next((run / "db").glob("*.db"))
    with closing(sqlite3.connect(db)) as conn:
        text, digest = conn.execute(
            "SELECT reflection_protocol_text, reflection_protocol_hash FROM run_meta"
        ).fetchone()
    return text, digest


def test_resume_refuses_another_profile_and_writes_nothing(earlier_run: Path, tmp_path: Path) -> None:
    from tests.runner.conftest import record_with

    runs_root = earlier_run.parent
    before = sorted(p.stat().st_mtime_ns for p in earlier_run.rglob("*") if p.is_file())
    with Simulator(SimConfig(seed=2)) as sim, pytest.raises(StoreError) as refused:
        record_with(_settings(sim, runs_root, None), runs_root, RUN_ID)
    lines = str(refused.value).splitlines()
    changed = [line for line in lines if line.startswith("  ")]
    profile = profile_fingerprint(load_profile(EARLIER))
    builtin = profile_fingerprint(builtin_profile())
    expected = f"HARNESS_PROFILE (name and fingerprint of the harness profile): earlier-harness ({profile})"
    # One change, one line: the detector and protocol hashes it changes are not listed again.
    assert changed == [f"  {expected} → oracleproto ({builtin})"], lines
    assert sorted(p.stat().st_mtime_ns for p in earlier_run.rglob("*") if p.is_file()) == before


def test_a_tampered_recorded_profile_is_refused(earlier_run: Path) -> None:
    snapshot = _snapshot(earlier_run)
    data = json.loads(snapshot[PROFILE_DATA_KEY])
    data["texts"]["status_header"] += " "
    snapshot[PROFILE_DATA_KEY] = json.dumps(data)
    with pytest.raises(StoreError, match="harness_profile has fingerprint"):
        recorded_run_texts(snapshot)
