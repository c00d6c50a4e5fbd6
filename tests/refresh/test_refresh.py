"""Refresh against the simulator: zero drift, persona drift, harness drift, partial refresh."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from syrupy.assertion import SnapshotAssertion

from oracleproto.analysis import analyze_run
from oracleproto.refresh import audit_json, render_markdown, zero_drift
from oracleproto.refresh.mask import VOLATILE_ENTRY_FIELDS
from oracleproto.refresh.rollups import carried_over
from oracleproto.transport.store import CassetteStore
from tests.refresh.conftest import ORIGINAL, REVISED_MODEL, SELECTED_QUESTION, Scenario, refresh

SAMPLES = 2


def pinned(audit: dict[str, Any]) -> dict[str, Any]:
    """The audit with volatile values masked: which masked fields differed, not how often."""
    out = json.loads(audit_json(audit))
    out["entries"]["masked_fields"] = dict.fromkeys(out["entries"]["masked_fields"], "<n>")
    return out


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def db_outcomes(run: Path) -> dict[tuple[str, str, int], tuple[Any, Any]]:
    """(db file, question, sample) → (letters, correct), read straight from SQLite."""
    out: dict[tuple[str, str, int], tuple[Any, Any]] = {}
    for db in sorted((run / "db").glob("*.db")):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        cols = ", ".join(f"s{j}_final_answer_letters, s{j}_correct" for j in range(SAMPLES))
        for row in con.execute(f"SELECT question_id, {cols} FROM run_results"):
            for j in range(SAMPLES):
                out[(db.name, row[0], j)] = (row[1 + 2 * j], row[2 + 2 * j])
        con.close()
    return out


def test_unchanged_personas_report_zero_drift(unchanged: Scenario, original: Path) -> None:
    audit = unchanged.audit
    assert zero_drift(audit)
    assert audit["entries"]["changed"] == []
    assert audit["entries"]["drift"] == {"provider": 0, "harness": 0, "follow-on": 0}
    assert (
        sum(c["unchanged"] for c in audit["entries"]["by_channel"].values())
        == audit["entries"]["total"]
        > 100
    )
    # Only masked fields differ — and they do differ: a live re-recording, not a copy.
    masked = set(audit["entries"]["masked_fields"])
    assert {"recorded_at", "generation", "uri"} <= masked
    assert masked <= {*VOLATILE_ENTRY_FIELDS, "request_headers", "tool_call_ids", "body.whitespace"} | {
        m for m in masked if m.startswith(("response_headers.", "body."))
    }
    assert audit["answers"]["flips"] == []
    assert all(r["delta"] == 0 for r in audit["answers"]["metric_deltas"])
    assert audit["provider_markers"] == audit["search_drift"] == audit["detector_flips"] == []
    assert audit["cost"]["carried_over"] == 0
    assert audit["cost"]["refresh"] == audit["cost"]["original"]


def test_refresh_writes_a_new_run_and_never_touches_the_old(unchanged: Scenario, original: Path) -> None:
    # The scenario's old run is a copy of the pristine recording: byte-identical afterwards.
    assert tree_digest(unchanged.old / "cassettes") == tree_digest(original / "cassettes")
    assert (unchanged.old / "manifest.json").read_bytes() == (original / "manifest.json").read_bytes()
    new = unchanged.result.new.root
    assert new.parent == unchanged.old.parent and new.name != ORIGINAL
    gens = CassetteStore(new / "cassettes", writable=False).entries_by_generation()
    old_gens = CassetteStore(original / "cassettes", writable=False).entries_by_generation()
    assert sorted(gens) == [0, 1]
    assert [e.recorded_at for e in gens[0]] == [e.recorded_at for e in old_gens[0]]  # copied, untouched
    assert {e.key for e in gens[1]} == {e.key for e in old_gens[0]}
    manifest = json.loads((new / "manifest.json").read_text())
    assert manifest["cassettes"]["mode"] == "refresh"
    written = sorted(p.name for p in unchanged.result.written)
    assert written == ["refresh_audit.json", "refresh_audit.md"]
    assert (new / "analysis" / "audit" / "refresh_audit.json").read_text() == audit_json(unchanged.audit)


def test_unchanged_report_snapshot(unchanged: Scenario, snapshot: SnapshotAssertion) -> None:
    assert pinned(unchanged.audit) == snapshot


def test_revised_persona_reports_exactly_its_flips_entries_and_deltas(revised: Scenario) -> None:
    audit = revised.audit
    assert not zero_drift(audit)
    changed = audit["entries"]["changed"]
    assert changed and all(c["drift"] == "provider" for c in changed if c["channel"] == "llm")
    assert audit["entries"]["drift"]["harness"] == 0
    assert {c["slot"][1].split("::")[0] for c in changed if c["channel"] == "llm"} == {REVISED_MODEL}
    # Flips: exactly the slots whose letters or correctness differ in the two runs' databases.
    before, after = db_outcomes(revised.old), db_outcomes(revised.result.new.root)
    expected = sorted((k[1], k[2]) for k in before if before[k] != after[k])
    reported = sorted((f["question"], f["sample"]) for f in audit["answers"]["flips"])
    assert reported == expected and reported
    assert {f["model"].split("::")[0] for f in audit["answers"]["flips"]} == {REVISED_MODEL}
    for flip in audit["answers"]["flips"]:
        db = next(k[0] for k in before if k[1] == flip["question"] and k[0].startswith("sim__hasty"))
        key = (db, flip["question"], flip["sample"])
        letters = before[key][0]
        assert (json.loads(letters) if letters else None) == flip["before"]["letters"]
    # Metric deltas: the other model does not move; the revised one moves by after − before.
    old_summary = analyze_run(revised.old, bootstrap_samples=0).models
    new_summary = analyze_run(revised.result.new.root, bootstrap_samples=0).models
    for row in audit["answers"]["metric_deltas"]:
        moved = new_summary[row["model"]][row["metric"]] - old_summary[row["model"]][row["metric"]]
        assert row["delta"] == moved
        if not row["model"].startswith(REVISED_MODEL):
            assert row["delta"] == 0 and row["ci"] == [0.0, 0.0]
        else:
            assert row["ci"][0] <= row["delta"] <= row["ci"][1]
    # New weights come with a new fingerprint: reported as provider-marker drift, not masked.
    assert [(m["model"], m["field"]) for m in audit["provider_markers"]] == [
        (REVISED_MODEL, "system_fingerprint")
    ]


def test_revised_report_snapshot(revised: Scenario, snapshot: SnapshotAssertion) -> None:
    assert render_markdown(pinned(revised.audit)) == snapshot


def test_renderer_change_is_harness_drift_not_provider_drift(renderer: Scenario) -> None:
    audit = renderer.audit
    drift = audit["entries"]["drift"]
    assert drift["harness"] > 0 and drift["provider"] == 0
    llm = [c for c in audit["entries"]["changed"] if c["channel"] == "llm"]
    first_turns = [c for c in llm if c["slot"][4] == 0]
    assert first_turns and all(c["class"] == "request_changed" for c in first_turns)
    assert any("$.body.messages[0].content" in line for c in first_turns for line in c["request_diff"])
    assert audit["provider_markers"] == []


def test_partial_refresh_touches_only_the_selected_trajectories(partial: Scenario) -> None:
    audit = partial.audit
    assert audit["selection"] == [f"model={REVISED_MODEL},question={SELECTED_QUESTION}"]
    changed = audit["entries"]["changed"]
    assert changed
    for c in changed:
        assert (
            c["channel"] == "llm"
            and c["slot"][1].startswith(REVISED_MODEL)
            and c["slot"][2] == SELECTED_QUESTION
        )
    flips = audit["answers"]["flips"]
    assert {(f["model"].split("::")[0], f["question"]) for f in flips} <= {(REVISED_MODEL, SELECTED_QUESTION)}
    # Every other slot's database row is identical to the recording.
    before, after = db_outcomes(partial.old), db_outcomes(partial.result.new.root)
    assert {k for k in before if before[k] != after[k]} <= {
        k for k in before if k[0].startswith("sim__hasty") and k[1] == SELECTED_QUESTION
    }
    cost = audit["cost"]
    assert cost["carried_over"] > 400
    # The new generation is complete; everything outside the selection is the old recording carried over.
    old_gen = CassetteStore(partial.old / "cassettes", writable=False).entries_by_generation()[0]
    new_gen = CassetteStore(partial.result.new.root / "cassettes", writable=False).entries_by_generation()[1]
    old_by_key = {e.key: e for e in old_gen}
    live = [e for e in new_gen if not carried_over(e, old_by_key)]
    assert live and len(live) == sum(v["calls"] for v in cost["refresh"].values())
    for e in live:
        assert e.context is not None
        assert e.context["model"].startswith(REVISED_MODEL) and e.context["question_id"] == SELECTED_QUESTION


def test_refreshing_a_refresh_compares_its_latest_generation(revised: Scenario) -> None:
    again = refresh(revised.result.new.root, "20260101-000000-0a05", revisions={REVISED_MODEL: 1})
    assert (again.audit["old"], again.audit["new"]) == ("20260101-000000-0a02@g1", "20260101-000000-0a05@g2")
    assert zero_drift(again.audit)
    gens = CassetteStore(again.new.root / "cassettes", writable=False).entries_by_generation()
    assert sorted(gens) == [0, 1, 2]
