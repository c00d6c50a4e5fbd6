"""Hostile run folders against ``verify`` and ``report``: YAML bombs, duplicates, escaping paths, schemas."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from oracleproto.analysis.reader import SUPPORTED_SCHEMA_VERSIONS
from oracleproto.store import Manifest
from oracleproto.store.manifest import SCHEMA_VERSION
from tests.hostile import peak_rss, run_main, tree
from tests.transport.test_safe_yaml import billion_laughs

SEARCH = Path("cassettes") / "search.yaml"


def duplicate_first_entry(path: Path) -> None:
    """Repeat the first interaction of a cassette file (each entry's digest still matches)."""
    text = path.read_text(encoding="utf-8")
    head, body = text.split("interactions:\n", 1)
    starts = [m.start() for m in re.finditer(r"^- ", body, flags=re.MULTILINE)]
    first = body[starts[0] : starts[1]]
    path.write_text(f"{head}interactions:\n{first}{body}", encoding="utf-8")


def set_manifest(run: Path, **changes: object) -> None:
    """Edit manifest.json (as raw JSON: report reads it without the store's model)."""
    path = run / "manifest.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def test_the_analysis_reader_supports_what_the_store_writes() -> None:
    assert tuple(range(1, SCHEMA_VERSION + 1)) == SUPPORTED_SCHEMA_VERSIONS


def test_verify_on_a_yaml_bomb_fails_the_file_in_bounded_memory(demo_copy: Path) -> None:
    (demo_copy / SEARCH).write_bytes(billion_laughs())
    code, output, rss = peak_rss("verify", demo_copy, "--quiet")
    print(f"verify on a billion-laughs cassette: exit {code}, peak RSS {rss:.0f} MB")
    assert code == 1, output
    assert "FAIL  cassettes/search.yaml" in output
    assert "refused: anchor (&name) at line 1, column 5" in output and "Traceback" not in output
    assert rss < 300


@pytest.mark.parametrize("damage", ["duplicate", "symlink"])
def test_verify_fails_a_duplicated_or_escaping_cassette(
    damage: str,
    demo_copy: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if damage == "duplicate":
        duplicate_first_entry(demo_copy / SEARCH)
        expected = "cassettes/search.yaml, entry #1: duplicate of entry #0"
    else:
        outside = tmp_path / "outside.yaml"
        (demo_copy / SEARCH).rename(outside)
        (demo_copy / SEARCH).symlink_to(outside)
        expected = f"cassette file {demo_copy / SEARCH} leads outside {demo_copy / 'cassettes'}"
    code, output = run_main(capsys, monkeypatch, "verify", demo_copy, "--quiet")
    assert code == 1, output
    assert expected in output and "NOT VERIFIED" in output


def test_verify_fails_a_model_file_outside_db(
    demo_copy: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = Manifest.load(demo_copy / "manifest.json")
    slug = manifest.models[0]
    edited = manifest.model_copy(update={"model_files": {**manifest.model_files, slug: "../manifest.json"}})
    (demo_copy / "manifest.json").write_text(edited.to_json(), encoding="utf-8")
    code, output = run_main(capsys, monkeypatch, "verify", demo_copy, "--quiet")
    assert code == 1, output
    assert f"model_files[{slug!r}] = '../manifest.json' is not a bare file name" in output


REPORT_CASES: list[tuple[str, dict[str, object], str]] = [
    (
        "schema_version 99",
        {"schema_version": 99},
        r"schema_version 99 is not one this oracleproto reads \(supported: 1, 2, 3, 4, 5\)",
    ),
    ("schema_version as text", {"schema_version": "5"}, r"schema_version: Input should be a valid integer"),
    (
        "model_files ../",
        {"model_files": "ESCAPE"},
        r"model_files\['[^']+'\] '\.\./\.\./outside\.db' escapes its folder",
    ),
    (
        "models not a list",
        {"models": {"a": 1}},
        r"keys 'models' \(list\) and 'model_files' \(object\) are required",
    ),
    (
        "model_files value a number",
        {"model_files": "NUMBER"},
        r"model_files\.\S+: Input should be a valid string",
    ),
]


@pytest.mark.parametrize("case", REPORT_CASES, ids=[c[0] for c in REPORT_CASES])
def test_report_refuses_a_hostile_manifest_and_writes_nothing(
    case: tuple[str, dict[str, object], str],
    demo_copy: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, changes, message = case
    manifest = json.loads((demo_copy / "manifest.json").read_text(encoding="utf-8"))
    slug = manifest["models"][0]
    (tmp_path / "outside.db").write_bytes((demo_copy / "db" / manifest["model_files"][slug]).read_bytes())
    if changes.get("model_files") == "ESCAPE":
        changes = {"model_files": {**manifest["model_files"], slug: "../../outside.db"}}
    elif changes.get("model_files") == "NUMBER":
        changes = {"model_files": {**manifest["model_files"], slug: 7}}
    set_manifest(demo_copy, **changes)
    before = tree(demo_copy)
    code, output = run_main(capsys, monkeypatch, "report", demo_copy, "--bootstrap", "0")
    assert code == 2, output
    assert re.search(message, output), output
    assert output.startswith(f"error: {demo_copy / 'manifest.json'}")
    assert tree(demo_copy) == before


def test_report_refuses_a_model_db_symlinked_out_of_the_run(
    demo_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = json.loads((demo_copy / "manifest.json").read_text(encoding="utf-8"))
    db = demo_copy / "db" / manifest["model_files"][manifest["models"][0]]
    db.rename(tmp_path / "outside.db")
    db.symlink_to(tmp_path / "outside.db")
    code, output = run_main(capsys, monkeypatch, "report", demo_copy, "--bootstrap", "0")
    assert code == 2, output
    assert f"{db} leads outside {demo_copy / 'db'}" in output


_DEEP = b"[" * 100_000  # json.loads raises RecursionError at this depth


@pytest.mark.parametrize(
    ("rel", "check", "message"),
    [
        (
            "attestation.json",
            "attestation.json",
            "attestation.json: not valid JSON (nested too deeply to read",
        ),
        ("manifest.json", "manifest.json", "manifest.json: not valid JSON (nested too deeply to read"),
        (
            "analysis/summary.json",
            "analysis/summary.json",
            "analysis/summary.json: differs from its regeneration",
        ),
    ],
)
def test_verify_fails_a_json_file_nested_too_deeply(
    demo_copy: Path, rel: str, check: str, message: str
) -> None:
    # Every file a stranger can hand over is read without a RecursionError escaping verify.
    from oracleproto.verify import verify_run

    (demo_copy / rel).write_bytes(_DEEP)
    report = verify_run(demo_copy)
    (found,) = [c for c in report.checks if c.what == check]
    assert found.status == "FAIL" and found.detail.startswith(message), found
