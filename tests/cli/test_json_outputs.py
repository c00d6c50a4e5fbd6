"""``--json`` of verify, replay and cassettes ls|stats; shell completion; the ``--run-id`` help."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli

RUN_ID = "20260103-040506-c0de"
SMALL = ("--personas", "1", "--samples", "1", "--no-progress")


def invoke(*args: str | Path, **extra: Any) -> tuple[int, str, str]:
    """The ``oracleproto`` group in-process: exit code, stdout, stderr."""
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False, **extra)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small recorded simulator run, with its analysis."""
    root = tmp_path_factory.mktemp("json")
    code, _, err = invoke("sim", "run", "--runs-root", root, "--run-id", RUN_ID, *SMALL)
    assert code == 0, err
    return root / RUN_ID


def _document(stdout: str, kind: str) -> dict[str, Any]:
    doc = json.loads(stdout)  # the whole of stdout is one JSON document
    assert doc["schema"] == "oracleproto-cli/1" and doc["kind"] == kind
    return dict(doc)


def test_verify_json_matches_the_text(recorded: Path) -> None:
    code, text, _ = invoke("verify", recorded, "--quiet")
    jcode, out, _ = invoke("verify", recorded, "--quiet", "--json")
    doc = _document(out, "verify")
    assert code == jcode == 0 and doc["verified"] is True
    lines = text.splitlines()
    assert len(doc["checks"]) == len(lines) - 1
    for check, line in zip(doc["checks"], lines, strict=False):
        assert line.split()[0] == check["status"] and check["what"] in line
    counts = doc["counts"]
    assert f"({counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped" in lines[-1]


def test_verify_json_of_a_tampered_run_exits_1_after_the_document(recorded: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / RUN_ID
    shutil.copytree(recorded, copy)
    table = copy / "analysis" / "table3_overall.md"
    table.write_text(table.read_text(encoding="utf-8") + "tampered\n", encoding="utf-8")
    code, out, _ = invoke("verify", copy, "--quiet", "--json")
    doc = _document(out, "verify")
    assert code == 1 and doc["verified"] is False
    failed = [c for c in doc["checks"] if c["status"] == "FAIL"]
    assert [c["what"] for c in failed] == ["analysis/table3_overall.md"]
    assert "differs from its regeneration" in failed[0]["detail"]


def test_replay_json_matches_the_text(recorded: Path, tmp_path: Path) -> None:
    code, text, _ = invoke("replay", recorded, "--out", tmp_path / "a", "--no-progress")
    jcode, out, _ = invoke("replay", recorded, "--out", tmp_path / "b", "--no-progress", "--json")
    doc = _document(out, "replay")
    assert code == jcode == 0 and doc["reproduced"] is True
    assert f"({doc['matched']}/{len(doc['checks'])} checks match)" in text
    for check in doc["checks"]:
        assert re.search(rf"{re.escape(check['what'])}\s+match", text)
    assert doc["replayed_run"] == str(tmp_path / "b" / RUN_ID)
    assert f"replayed run: {tmp_path / 'a' / RUN_ID}" in text
    assert doc["savings"] in text
    total = sum(t["requests"] for t in doc["traffic"].values())
    assert f"requests this session: {total} " in text
    assert doc["tables"]["table3_overall"].strip() in text


def test_cassettes_stats_json_matches_the_text(recorded: Path) -> None:
    code, text, _ = invoke("cassettes", "stats", recorded)
    jcode, out, _ = invoke("cassettes", "stats", recorded, "--json")
    doc = _document(out, "cassettes-stats")
    assert code == jcode == 0
    assert f"bytes: {doc['bytes']}" in text and f"root digest: {doc['root_digest']}" in text
    for name, ch in doc["channels"].items():
        assert f"{name}: {ch['entries']} entries (distinct keys), {ch['requests']} requests" in text
    assert doc["sample_collapse"]["status"] == "ok" and "sample-collapse check: ok" in text
    assert doc["savings"] in text


def test_cassettes_ls_json_matches_the_text(recorded: Path) -> None:
    code, text, _ = invoke("cassettes", "ls", recorded)
    jcode, out, _ = invoke("cassettes", "ls", recorded, "--json")
    doc = _document(out, "cassettes-ls")
    assert code == jcode == 0
    lines = text.splitlines()
    assert len(doc["entries"]) == len(lines)
    for entry, line in zip(doc["entries"], lines, strict=True):
        assert line.startswith(
            f"{entry['key'][:16]}  {entry['channel']:<8} {entry['status']:>3}  g{entry['generation']}"
        )


def test_cassettes_ls_json_of_one_sample_counts_its_users(recorded: Path) -> None:
    slug = json.loads((recorded / "manifest.json").read_text(encoding="utf-8"))["models"][0]
    code, out, _ = invoke("cassettes", "ls", recorded, "--sample", slug, "demo-01", "0", "--json")
    doc = _document(out, "cassettes-ls")
    assert code == 0 and doc["sample"] == [slug, "demo-01", 0] and doc["entries"]
    assert all(e["used_by_samples"] >= 1 for e in doc["entries"])
    assert {e["channel"] for e in doc["entries"]} >= {"llm"}


def test_json_errors_still_exit_non_zero(tmp_path: Path) -> None:
    code, out, _ = invoke("cassettes", "stats", tmp_path, "--json")
    assert code != 0 and out == ""


def test_bash_completion_script_is_produced() -> None:
    code, out, _ = invoke(prog_name="oracleproto", env={"_ORACLEPROTO_COMPLETE": "bash_source"})
    assert code == 0
    assert (
        "_oracleproto_completion()" in out
        and "complete -o nosort -F _oracleproto_completion oracleproto" in out
    )


def test_completion_completes_commands() -> None:
    env = {"_ORACLEPROTO_COMPLETE": "bash_complete", "COMP_WORDS": "oracleproto expo", "COMP_CWORD": "1"}
    code, out, _ = invoke(prog_name="oracleproto", env=env)
    assert code == 0 and "plain,export" in out.splitlines()


@pytest.mark.parametrize("command", [("run",), ("sim", "run")])
def test_run_id_help_shows_what_a_run_id_looks_like(command: tuple[str, ...]) -> None:
    code, out, _ = invoke(*command, "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "YYYYMMDD-HHMMSS" in flat and "20260301-120000-0a1f" in flat
