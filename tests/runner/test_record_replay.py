"""Record a full run against the simulator, then replay it offline byte for byte (issue 5)."""

from __future__ import annotations

import json
import random
import shutil
import socket
import sqlite3
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_socket import SocketBlockedError, disable_socket, enable_socket, socket_allow_hosts

from oracleproto.agent.result import SAMPLE_FIELDS, SKIPPED_TRAINING_CUTOFF
from oracleproto.cli.run import write_run_analysis
from oracleproto.dataset.admission import admissible, parse_training_cutoff
from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.loader import load_questions
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.replay import ReplayReport, replay_run
from oracleproto.sim.harness import SIM_MODELS
from oracleproto.store import RunDir, logical_dump, model_file_name

MODELS = 3  # the third simulated model's cutoff excludes some demo questions
SAMPLES = 3
MANIFEST_KEYS = {
    "run_id",
    "schema_version",
    "analysis_schema",
    "sampling_n",
    "models",
    "model_files",
    "model_training_cutoffs",
    "filters",
    "hashes",
    "reflection_protocol_hash",
    "belief_protocol_hash",
    "grid",
    "started_at",
    "finished_at",
}
ANALYSIS_FILES = ("summary.json", "table3_overall.md", "table4_buckets.md", "table5_consistency.md")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory, record_sim: Any) -> RunDir:
    """One recording: 3 simulated models, n = 3, demo dataset, analysis written."""
    root = tmp_path_factory.mktemp("recorded")
    summary = record_sim(root, models=MODELS, samples=SAMPLES, analysis=True)
    return summary.run


async def replay_offline(
    original: Path, out: Path, clock: FakeClock, *, analysis: bool = True
) -> ReplayReport:
    """Replay with every socket blocked; proves the guard is live while it runs."""
    disable_socket(allow_unix_socket=False)
    try:
        with pytest.raises(SocketBlockedError), pytest.warns(UserWarning, match="socket"):
            socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        return await replay_run(
            original,
            out,
            clock=clock,
            rand=random.Random(1),
            progress=False,
            after=write_run_analysis if analysis else None,
        )
    finally:
        enable_socket()
        socket_allow_hosts(["127.0.0.1", "::1"])


def test_manifest_has_every_run_layout_key(recorded: RunDir) -> None:
    manifest = json.loads(recorded.manifest_path.read_text(encoding="utf-8"))
    assert set(manifest) >= MANIFEST_KEYS
    assert manifest["schema_version"] == 5 and manifest["analysis_schema"] == "v4"
    assert manifest["sampling_n"] == SAMPLES
    assert manifest["finished_at"] is not None and manifest["started_at"] <= manifest["finished_at"]
    slugs = [f"{model}::r5::c4" for model, _ in SIM_MODELS[:MODELS]]
    assert manifest["models"] == slugs
    assert manifest["model_files"] == {s: model_file_name(s) for s in slugs}
    assert manifest["grid"]["n_cells"] == MODELS
    assert manifest["cassettes"]["mode"] == "record" and len(manifest["cassettes"]["root_digest"]) == 64
    questions = load_questions(demo_db_path())
    expected_order = [q.id for q in sorted(questions, key=lambda q: (q.end_time, q.id))]
    assert manifest["filters"]["question_ids"] == expected_order
    assert manifest["filters"]["question_count"] == len(questions)


def test_one_db_per_virtual_slug_and_every_slot_written_once(recorded: RunDir) -> None:
    manifest = recorded.load_manifest()
    assert sorted(p.name for p in recorded.db_dir.glob("*.db")) == sorted(manifest.model_files.values())
    questions = load_questions(demo_db_path())
    cutoffs = dict(SIM_MODELS)
    for slug, path in recorded.model_db_paths(manifest).items():
        real = slug.split("::")[0]
        with sqlite3.connect(path) as conn:
            ids = [r[0] for r in conn.execute("SELECT question_id FROM run_results")]
            assert sorted(ids) == sorted(q.id for q in questions), slug
            meta_rows = conn.execute("SELECT model, sampling_n, finished_at FROM run_meta").fetchall()
            assert len(meta_rows) == 1 and meta_rows[0][:2] == (slug, SAMPLES) and meta_rows[0][2]
            for q in questions:
                admitted = admissible(q, parse_training_cutoff(cutoffs[real])).admitted
                for i in range(SAMPLES):
                    created, error = conn.execute(
                        f"SELECT s{i}_created_at, s{i}_error FROM run_results WHERE question_id = ?", (q.id,)
                    ).fetchone()
                    assert created is not None, (slug, q.id, i)
                    assert (error == SKIPPED_TRAINING_CUTOFF) is (not admitted), (slug, q.id, i, error)
        conn.close()
    # The simulated cutoffs are chosen so that admission actually excludes something.
    excluded = [
        q
        for q in questions
        for m, c in SIM_MODELS[:MODELS]
        if not admissible(q, parse_training_cutoff(c)).admitted
    ]
    assert excluded


def test_the_log_shows_each_model_call_slot_run_exactly_once(recorded: RunDir) -> None:
    events = [json.loads(line) for line in recorded.log_path.read_text(encoding="utf-8").splitlines()]
    done = Counter((e["model"], e["question"], e["sample"]) for e in events if e["event"] == "sample_done")
    assert done and set(done.values()) == {1}
    with_model = 0
    manifest = recorded.load_manifest()
    for path in recorded.model_db_paths(manifest).values():
        with sqlite3.connect(path) as conn:
            for i in range(SAMPLES):
                with_model += conn.execute(
                    f"SELECT COUNT(*) FROM run_results WHERE s{i}_error IS NOT ? OR s{i}_error IS NULL",
                    (SKIPPED_TRAINING_CUTOFF,),
                ).fetchone()[0]
        conn.close()
    assert len(done) == with_model
    assert [e["event"] for e in events][-1] == "run_finished"


def test_analysis_is_written(recorded: RunDir) -> None:
    for name in ANALYSIS_FILES:
        assert (recorded.analysis_dir / name).stat().st_size > 0, name
    summary = json.loads((recorded.analysis_dir / "summary.json").read_text(encoding="utf-8"))
    assert json.dumps(summary).count("::r5::c4") >= MODELS


def test_table3_cost_comes_from_the_simulated_invoice(recorded: RunDir) -> None:
    """careful reports OpenRouter's usage.cost, hasty xAI's ticks, sloppy nothing (issue 13 §6)."""
    summary = json.loads((recorded.analysis_dir / "summary.json").read_text(encoding="utf-8"))
    models = summary["models"]
    careful, hasty, sloppy = (models[f"sim/{p}::r5::c4"] for p in ("careful", "hasty", "sloppy"))
    for entry in (careful, hasty):
        llm = entry["cost_detail"]["llm"]
        assert entry["cost_source"] == "provider" and llm["calls"] == llm["calls_with_provider_cost"] > 0
        assert (
            entry["total_cost_usd"] == pytest.approx(llm["provider_cost_usd"], abs=1e-6)
            and entry["total_cost_usd"] > 0
        )
        assert entry["per_correct_cost_usd"] == pytest.approx(
            # summary.json rounds to 6 decimals: compare with the rounding's tolerance.
            entry["total_cost_usd"] / (entry["eval_questions"] * SAMPLES * entry["composite_accuracy"]),
            rel=1e-3,
        )
        # Searches at the simulator's $0.008 per basic-search credit, the detector's reported cost.
        search, detector = entry["cost_detail"]["search"], entry["cost_detail"]["detector"]
        assert search["credits"] == search["calls"] and search["usd"] == pytest.approx(
            0.008 * search["calls"]
        )
        assert detector["source"] == "provider" and detector["calls"] > 0
        with_tools = entry["total_cost_usd"] + search["usd"] + detector["usd"]
        assert entry["total_cost_with_tools_usd"] == pytest.approx(with_tools, abs=3e-6)
    assert careful["cost_detail"]["llm"]["cached_tokens"] > 0  # multi-turn samples hit the prefix cache
    assert (sloppy["cost_source"], sloppy["total_cost_usd"], sloppy["total_cost_with_tools_usd"]) == (
        "n/a",
        None,
        None,
    )
    table = (recorded.analysis_dir / "table3_overall.md").read_text(encoding="utf-8")
    assert table.count("| provider |") == 2 and table.count("| n/a |") == 1


def test_every_sample_has_model_output(
    recorded: RunDir, raw_slot_reader: Callable[[Path], dict[Any, dict[str, Any]]]
) -> None:
    slots = raw_slot_reader(recorded.root)
    called = [c for c in slots.values() if c["error"] != SKIPPED_TRAINING_CUTOFF]
    assert called and all(c["react_steps"] >= 1 and c["messages_trace"] for c in called)
    # Searches happened and were audited by the detector.
    audited = [json.loads(c["search_calls"]) for c in called if c["search_calls"]]
    assert any(call.get("detector_verdicts") for calls in audited for call in calls)
    assert len(SAMPLE_FIELDS) == 24


async def test_replay_is_offline_and_byte_identical(recorded: RunDir, tmp_path: Path) -> None:
    clock = FakeClock()
    report = await replay_offline(recorded.root, tmp_path, clock)
    failed = [(c.what, c.detail) for c in report.checks if not c.ok]
    assert failed == []
    assert report.ok
    checked = {c.what for c in report.checks}
    assert "manifest.json" in checked and "analysis/summary.json" in checked
    assert sum(w.startswith("db/") for w in checked) == MODELS
    # Every slot that needed the model was re-executed from the cassettes (the rest are cutoff skips).
    summary = report.summary
    assert summary.slots_run > 0 and summary.slots_done_before + summary.slots_run == summary.slots_total
    assert clock.sleeps == []  # replay never waits


async def test_two_replays_dump_identically(recorded: RunDir, tmp_path: Path) -> None:
    first = await replay_offline(recorded.root, tmp_path / "one", FakeClock(), analysis=False)
    second = await replay_offline(recorded.root, tmp_path / "two", FakeClock(), analysis=False)
    a, b = RunDir.open(first.replayed), RunDir.open(second.replayed)
    assert a.manifest_path.read_bytes() == b.manifest_path.read_bytes()
    manifest = a.load_manifest()
    for slug, path in a.model_db_paths(manifest).items():
        twin = b.model_db_paths(manifest)[slug]
        assert logical_dump(path) == logical_dump(twin), slug


async def test_a_changed_cell_is_caught(recorded: RunDir, tmp_path: Path) -> None:
    # The byte-identity check can fail: change one stored cell in a copy of the recording.
    copy = tmp_path / "copy" / recorded.run_id
    shutil.copytree(recorded.root, copy)
    db = next(iter(RunDir.open(copy).model_db_paths(RunDir.open(copy).load_manifest()).values()))
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE run_results SET s0_final_answer_raw = 'tampered' WHERE rowid = 1")
    conn.close()
    report = await replay_offline(copy, tmp_path / "out", FakeClock(), analysis=False)
    assert not report.ok
    differing = [c for c in report.checks if not c.ok and not c.what.startswith("analysis/")]
    assert [c.what for c in differing] == [f"db/{db.name}"]
    assert "tampered" in differing[0].detail
