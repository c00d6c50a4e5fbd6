"""``verify`` passes on the committed demo and names the location of any single changed byte."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from oracleproto.verify import VerifyReport, verify_run
from oracleproto.verify.attest import BLOCK


def _flip(path: Path, needle: bytes, *, nth: int = 0, delta: int = 1) -> int:
    """Change one byte (the first of the ``nth`` occurrence of ``needle``); returns its offset."""
    data = bytearray(path.read_bytes())
    offset = -1
    for _ in range(nth + 1):
        offset = data.index(needle, offset + 1)
    data[offset] = data[offset] + delta
    path.write_bytes(bytes(data))
    return offset


def _failure(report: VerifyReport, what: str) -> str:
    found = [c.detail for c in report.failures if c.what == what]
    assert found, f"no failure {what!r}; failures: {[(c.what, c.detail) for c in report.failures]}"
    return found[0]


def test_committed_demo_verifies(demo_run: Path) -> None:
    report = verify_run(demo_run)
    assert report.ok, report.failures
    kinds = {c.what for c in report.checks}
    assert {
        "manifest.json",
        "cassettes root digest",
        "files ↔ attestation",
        "dataset source_db hash",
    } <= kinds
    assert any(w.startswith("analysis/table3_overall.md") for w in kinds)
    assert not [c for c in report.checks if c.status == "skip"]


def test_one_byte_in_a_cassette_entry_names_file_and_entry(demo_copy: Path) -> None:
    cassette = sorted((demo_copy / "cassettes" / "llm").glob("*.yaml"))[0]
    offset = _flip(cassette, b"boxed", nth=2)
    report = verify_run(demo_copy)
    rel = f"cassettes/llm/{cassette.name}"
    detail = _failure(report, rel)
    assert f"{rel}, entry #" in detail and "does not match its digest" in detail
    assert f"bytes {offset // BLOCK * BLOCK}–" in _failure(report, f"file {rel}")
    assert not report.ok
    (samples,) = [c for c in report.checks if c.what == "sample entries root"]
    assert samples.status == "skip" and "cassettes failed their checks" in samples.detail


def test_one_byte_in_cassette_layout_is_located_by_offset(demo_copy: Path) -> None:
    cassette = demo_copy / "cassettes" / "search.yaml"
    offset = _flip(cassette, b"version: 1")
    report = verify_run(demo_copy)
    detail = _failure(report, "cassettes/search.yaml")
    assert f"byte offset {offset} " in detail and "deterministic serialisation" in detail


def test_one_byte_in_a_db_value_names_table_row_and_column(demo_copy: Path) -> None:
    db = sorted((demo_copy / "db").glob("*.db"))[0]
    conn = sqlite3.connect(db)
    qid, event = conn.execute("SELECT id, event FROM questions ORDER BY id LIMIT 1").fetchone()
    conn.close()
    _flip(db, event.encode("utf-8")[:40])
    report = verify_run(demo_copy)
    rel = f"db/{db.name}"
    assert f"table questions row {qid!r} column event" in _failure(report, f"file {rel}")
    assert f"row id={qid!r} column 'event' differs from the dataset" in _failure(
        report, f"{rel} questions ↔ dataset"
    )


def test_one_byte_in_the_manifest_breaks_the_chain(demo_copy: Path) -> None:
    manifest = demo_copy / "manifest.json"
    text = manifest.read_bytes()
    start = text.index(b'"root_digest": "') + len(b'"root_digest": "')
    data = bytearray(text)
    data[start] = ord("0") if data[start] != ord("0") else ord("1")
    manifest.write_bytes(bytes(data))
    report = verify_run(demo_copy)
    assert "manifest.json cassettes.root_digest is" in _failure(report, "cassettes root digest")
    assert f"bytes {start // BLOCK * BLOCK}–" in _failure(report, "file manifest.json")


def test_manifest_layout_edit_is_located(demo_copy: Path) -> None:
    manifest = demo_copy / "manifest.json"
    text = manifest.read_bytes()
    offset = text.index(b'"run_id"')
    manifest.write_bytes(text[:offset] + b" " + text[offset:])
    report = verify_run(demo_copy)
    assert f"byte offset {offset} " in _failure(report, "manifest.json")


def test_one_byte_in_an_analysis_table_names_file_offset_and_line(demo_copy: Path) -> None:
    table = demo_copy / "analysis" / "table3_overall.md"
    data = table.read_bytes()
    offset = next(i for i in range(len(data)) if data[i : i + 1].isdigit() and i > data.index(b"| sim/"))
    table.write_bytes(
        data[:offset] + (b"7" if data[offset : offset + 1] != b"7" else b"8") + data[offset + 1 :]
    )
    report = verify_run(demo_copy)
    detail = _failure(report, "analysis/table3_overall.md")
    line = data[:offset].count(b"\n") + 1
    assert f"byte offset {offset} (line {line}," in detail and "regeneration from db/" in detail


def test_damaged_attestation_is_reported_as_such(demo_copy: Path) -> None:
    path = demo_copy / "attestation.json"
    data = bytearray(path.read_bytes())
    at = data.index(b'"size": ') + len(b'"size": ')
    data[at] = ord("9") if data[at] != ord("9") else ord("8")
    path.write_bytes(bytes(data))
    report = verify_run(demo_copy)
    assert "self_digest does not match" in _failure(report, "attestation.json")


def test_an_unfinished_run_is_told_to_resume(demo_copy: Path) -> None:
    manifest = demo_copy / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["finished_at"] = None
    data["cassettes"]["root_digest"] = None
    manifest.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    journal = demo_copy / "cassettes" / ".journal"
    journal.mkdir(exist_ok=True)
    (journal / "1234-abcd.jsonl").write_text('{"key": "x"}\n', encoding="utf-8")
    report = verify_run(demo_copy)
    run_id = demo_copy.name
    resume = f"resume it (rerun the command that recorded it with `--run-id {run_id}`)"
    assert f"has not finished (finished_at is null): {resume}" in _failure(report, "cassettes root digest")
    assert resume in _failure(report, "cassettes journal")
    (samples,) = [c for c in report.checks if c.what == "sample entries root"]
    assert samples.status == "skip" and "has not finished" in samples.detail


def test_a_sample_bound_to_other_entries_is_caught(demo_copy: Path) -> None:
    db = sorted((demo_copy / "db").glob("*.db"))[0]
    conn = sqlite3.connect(db)
    qid, sample, keys = conn.execute(
        "SELECT question_id, sample, entry_keys FROM oracleproto_sample_entries ORDER BY question_id LIMIT 1"
    ).fetchone()
    conn.execute(
        "UPDATE oracleproto_sample_entries SET entry_keys = ? WHERE question_id = ? AND sample = ?",
        (json.dumps(json.loads(keys)[1:]), qid, sample),
    )
    conn.commit()
    conn.close()
    report = verify_run(demo_copy)
    assert "the samples in db/ and the entries in cassettes/ give" in _failure(report, "sample entries root")


def test_the_committed_demo_binds_every_sample_to_its_entries(demo_run: Path) -> None:
    report = verify_run(demo_run)
    (check,) = [c for c in report.checks if c.what == "sample entries root"]
    assert check.status == "pass" and "each bound to the entries it used" in check.detail
