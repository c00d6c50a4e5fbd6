"""Every link of verify's hash chain fails on its own when only its two ends disagree.

Issue 28 §4: removing the ``run_meta.metadata_hash`` link, or making the dataset
``prompt_templates`` hash link always pass, left the whole suite green, because the tests
that damage a run change bytes that several links (and the attestation) see at once. Here
one value is changed at a time in a copy of one demo DB (or of the manifest's recorded
hashes), and the check of that link is the one that must fail, with the message naming
the recorded and the changed value. Expected values come from the committed manifest's
JSON text and the values the test writes, not from the code under test.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from oracleproto.dataset.demo import demo_db_path
from oracleproto.store import Manifest
from oracleproto.verify.chain import (
    check_database,
    check_dataset,
    check_snapshots_agree,
    find_dataset,
    time_offset,
)
from oracleproto.verify.findings import Check

SLUG = "sim/hasty::r5::c4"
DB_NAME = "sim__hasty__r5__c4.db"
LABEL = f"db/{DB_NAME}"
#: The committed demo manifest's dataset hashes (manifest.json, ``hashes``).
SOURCE_DB = "dbc8bdbde423f3500e537573f0315805a9b72cf38dec316940e4e1105b9ad2fa"
METADATA = "1c4ecee200455f522e4f8937ecf1f7815147526c062f00fb784c7fe06312c4b9"
TEMPLATES = "a806fab3b04e1db6fd074cb2c50a1361a1b9bb2f01d4d735ee70f0475848d3d3"
OTHER = "0123456789abcdef" * 4


@pytest.fixture(scope="module")
def manifest_json(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from oracleproto.verify.demo import find_demo_run

    data: dict[str, Any] = json.loads((find_demo_run() / "manifest.json").read_text(encoding="utf-8"))
    return data


@pytest.fixture
def db_copy(tmp_path: Path) -> Path:
    from oracleproto.verify.demo import find_demo_run

    target = tmp_path / DB_NAME
    shutil.copyfile(find_demo_run() / "db" / DB_NAME, target)
    return target


def _manifest(data: dict[str, Any]) -> Manifest:
    return Manifest.from_json(json.dumps(data))


def _by_what(checks: list[Check]) -> dict[str, Check]:
    return {c.what: c for c in checks}


def _edit_first_template(db: Path, value_sql: str) -> str:
    """Set the first template (by key) to ``value_sql`` (an SQL expression); its key."""
    conn = sqlite3.connect(db)
    try:
        (key,) = conn.execute("SELECT key FROM prompt_templates ORDER BY key LIMIT 1").fetchone()
    finally:
        conn.close()
    _set(db, f"UPDATE prompt_templates SET value = {value_sql} WHERE key = ?", key)
    return str(key)


def _set(db: Path, sql: str, *args: object) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute(sql, args)
        conn.commit()
    finally:
        conn.close()


def test_the_untouched_db_passes_every_link(db_copy: Path, manifest_json: dict[str, Any]) -> None:
    checks, meta = check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))
    assert [(c.what, c.status) for c in checks] == [
        (f"{LABEL} sqlite", "pass"),
        (f"{LABEL} run_meta ↔ manifest", "pass"),
        (f"{LABEL} prompt_templates ↔ run_meta", "pass"),
        (f"{LABEL} questions ↔ manifest filters", "pass"),
    ]
    assert meta is not None and meta.metadata_hash == METADATA


@pytest.mark.parametrize(
    ("column", "recorded"),
    [
        ("run_id", "20260101-000000-de00"),
        ("model", SLUG),
        ("source_db_hash", SOURCE_DB),
        ("metadata_hash", METADATA),
        ("prompt_templates_hash", TEMPLATES),
        ("training_cutoff", "2025-12-15"),
        ("reflection_protocol_hash", "b926a4f8d7ac42ff"),
        ("started_at", "2026-11-24T04:25:42.511623+00:00"),
        ("finished_at", "2026-11-24T04:25:50.251236+00:00"),
    ],
)
def test_each_run_meta_link_fails_alone(
    db_copy: Path, manifest_json: dict[str, Any], column: str, recorded: str
) -> None:
    changed = {
        "training_cutoff": "2025-12-16",
        "started_at": "2026-11-24T04:25:42.511624+00:00",
        "finished_at": "2026-11-24T04:25:50.251237+00:00",
        "model": "sim/hasty::r5::c3",
        "run_id": "20260101-000000-de01",
    }.get(column, OTHER)
    _set(db_copy, f"UPDATE run_meta SET {column} = ?", changed)
    checks = _by_what(check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))[0])
    link = checks[f"{LABEL} run_meta ↔ manifest"]
    assert link.status == "FAIL"
    assert link.detail == f"{LABEL}: run_meta.{column} is {changed!r} but manifest.json says {recorded!r}"


def test_sampling_n_and_filters_links(db_copy: Path, manifest_json: dict[str, Any]) -> None:
    _set(db_copy, "UPDATE run_meta SET sampling_n = 4, belief_protocol_hash = 'abcdabcdabcdabcd'")
    detail = _by_what(check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))[0])[
        f"{LABEL} run_meta ↔ manifest"
    ].detail
    assert detail == (
        f"{LABEL}: run_meta.sampling_n is 4 but manifest.json says 3; "
        "run_meta.belief_protocol_hash is 'abcdabcdabcdabcd' but manifest.json says None"
    )
    data = json.loads(json.dumps(manifest_json))
    data["filters"]["question_count"] = 15
    checks = _by_what(check_database(db_copy, LABEL, SLUG, _manifest(data))[0])
    assert checks[f"{LABEL} run_meta ↔ manifest"].detail.startswith(
        f"{LABEL}: run_meta.sampling_n is 4 but manifest.json says 3; "
        "run_meta.belief_protocol_hash is 'abcdabcdabcdabcd' but manifest.json says None; "
        "run_meta.filters_snapshot is {"
    )


def test_an_unfinished_db_of_a_finished_run_fails(db_copy: Path, manifest_json: dict[str, Any]) -> None:
    _set(db_copy, "UPDATE run_meta SET finished_at = NULL")
    link = _by_what(check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))[0])[
        f"{LABEL} run_meta ↔ manifest"
    ]
    assert link.detail == (
        f"{LABEL}: run_meta.finished_at is None but manifest.json says '2026-11-24T04:25:50.251236+00:00'"
    )


def test_a_stored_template_changed_breaks_its_link_to_run_meta(
    db_copy: Path, manifest_json: dict[str, Any]
) -> None:
    _edit_first_template(db_copy, "value || ' '")
    checks = _by_what(check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))[0])
    link = checks[f"{LABEL} prompt_templates ↔ run_meta"]
    assert link.status == "FAIL"
    assert link.detail.startswith(f"{LABEL}: table prompt_templates hashes to ")
    assert link.detail.endswith(f"but run_meta.prompt_templates_hash is {TEMPLATES[:16]}…")
    assert checks[f"{LABEL} run_meta ↔ manifest"].status == "pass"


def test_a_seeded_question_missing_from_the_filters_fails(
    db_copy: Path, manifest_json: dict[str, Any]
) -> None:
    _set(db_copy, "UPDATE questions SET id = 'demo-99' WHERE id = 'demo-16'")
    link = _by_what(check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))[0])[
        f"{LABEL} questions ↔ manifest filters"
    ]
    assert link == Check(
        f"{LABEL} questions ↔ manifest filters",
        "FAIL",
        f"{LABEL}: table questions holds ids ['demo-16', 'demo-99'] unlike the manifest",
    )


@pytest.mark.parametrize(
    ("name", "actual"),
    [("source_db", SOURCE_DB), ("metadata", METADATA), ("prompt_templates", TEMPLATES)],
)
def test_each_dataset_hash_link_fails_alone(manifest_json: dict[str, Any], name: str, actual: str) -> None:
    data = json.loads(json.dumps(manifest_json))
    data["hashes"][name] = OTHER
    checks = _by_what(check_dataset(demo_db_path(), _manifest(data), {}))
    expected = {"source_db": SOURCE_DB, "metadata": METADATA, "prompt_templates": TEMPLATES}
    for other, digest in expected.items():
        check = checks[f"dataset {other} hash"]
        if other == name:
            assert check == Check(
                f"dataset {name} hash",
                "FAIL",
                f"manifest.json hashes.{name} is {OTHER}, demo.db gives {actual}",
            )
        else:
            assert check == Check(f"dataset {other} hash", "pass", digest[:16] + "…")


def test_dataset_links_compare_each_db_with_the_dataset(db_copy: Path, manifest_json: dict[str, Any]) -> None:
    manifest = _manifest(manifest_json)
    assert check_dataset(demo_db_path(), manifest, {LABEL: db_copy})[-1] == Check(
        f"{LABEL} questions ↔ dataset", "pass"
    )
    key = _edit_first_template(db_copy, "value || ' '")
    _set(db_copy, "UPDATE questions SET answer = 'Z' WHERE id = 'demo-01'")
    _set(db_copy, "UPDATE questions SET id = 'demo-99' WHERE id = 'demo-16'")
    assert check_dataset(demo_db_path(), manifest, {LABEL: db_copy})[-1] == Check(
        f"{LABEL} questions ↔ dataset",
        "FAIL",
        f"{LABEL}: row id='demo-01' column 'answer' differs from the dataset; "
        "row id='demo-99' is not in the dataset; "
        f"table prompt_templates row key={key!r} column 'value' differs from the dataset",
    )


def _metas(**snapshots: dict[str, Any]) -> dict[str, Any]:
    """Stand-ins for RunMeta: check_snapshots_agree reads config_snapshot only."""
    return {f"db/{label}.db": SimpleNamespace(config_snapshot=snap) for label, snap in snapshots.items()}


def test_every_db_must_carry_the_first_dbs_config_snapshot() -> None:
    same = {"llm": {"models": ["m"]}}
    assert check_snapshots_agree(_metas(a=same, b=dict(same), c=dict(same))) == Check(
        "config_snapshot agreement", "pass", "3 databases"
    )
    other = {"llm": {"models": ["n"]}}
    # The second of three differs: compared with the first, and named with it.
    detail = "db/b.db: run_meta.config_snapshot differs from the one in db/a.db"
    assert check_snapshots_agree(_metas(a=same, b=other, c=same)) == Check(
        "config_snapshot agreement", "FAIL", detail
    )
    assert check_snapshots_agree(_metas(a=same, b=same, c=other)).detail == (
        "db/c.db: run_meta.config_snapshot differs from the one in db/a.db"
    )


#: sha256 of the bytes b"one" and b"two" (``printf two | sha256sum``).
SHA_ONE = "7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed"
SHA_TWO = "3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3"


def test_find_dataset_takes_the_first_file_whose_sha256_is_the_recorded_one(tmp_path: Path) -> None:
    one, two, again = tmp_path / "one.db", tmp_path / "two.db", tmp_path / "again.db"
    one.write_bytes(b"one")
    two.write_bytes(b"two")
    again.write_bytes(b"two")
    folder, missing = tmp_path / "folder", tmp_path / "missing.db"
    folder.mkdir()
    assert find_dataset(SHA_TWO, [missing, folder, one, two, again]) == two
    assert find_dataset(SHA_ONE, [two, one]) == one
    assert find_dataset(SHA_TWO, [missing, folder, one]) is None


def test_time_offset_is_the_larger_of_the_start_and_finish_distances() -> None:
    meta: Any = SimpleNamespace(
        started_at=datetime(2026, 5, 1, 0, 0, 0, tzinfo=UTC),
        finished_at=datetime(2026, 5, 1, 1, 0, 0, tzinfo=UTC),
    )
    # Start 0.25 s apart, finish 2 s apart (the manifest's clock read later both times).
    manifest: Any = SimpleNamespace(
        started_at="2026-05-01T00:00:00.250000+00:00", finished_at="2026-05-01T01:00:02.000000+00:00"
    )
    assert time_offset(meta, manifest) == 2.0
    # An unfinished manifest (or DB) has only the start to compare.
    manifest.finished_at = None
    assert time_offset(meta, manifest) == 0.25


def test_a_row_not_in_the_dataset_does_not_hide_the_rows_after_it(
    db_copy: Path, manifest_json: dict[str, Any]
) -> None:
    # 'demo-00' sorts first and is not in the dataset; demo-02's change comes after it and is still read.
    _set(db_copy, "UPDATE questions SET id = 'demo-00' WHERE id = 'demo-01'")
    _set(db_copy, "UPDATE questions SET answer = 'Z' WHERE id = 'demo-02'")
    assert check_dataset(demo_db_path(), _manifest(manifest_json), {LABEL: db_copy})[-1] == Check(
        f"{LABEL} questions ↔ dataset",
        "FAIL",
        f"{LABEL}: row id='demo-00' is not in the dataset; "
        "row id='demo-02' column 'answer' differs from the dataset",
    )


def test_an_unreadable_database_is_one_failed_check_naming_it(
    tmp_path: Path, manifest_json: dict[str, Any]
) -> None:
    garbage = tmp_path / DB_NAME
    garbage.write_bytes(b"not a database, " * 256)
    checks, meta = check_database(garbage, LABEL, SLUG, _manifest(manifest_json))
    assert meta is None
    assert checks == [
        Check(f"{LABEL} sqlite", "FAIL", f"{LABEL}: not a readable run database (file is not a database)")
    ]


def test_integrity_problems_are_listed_five_at_most(db_copy: Path, manifest_json: dict[str, Any]) -> None:
    # An index rewritten to cover another column: every row is then missing from it (16 problems).
    _set(db_copy, "CREATE INDEX zz ON questions(answer)")
    conn = sqlite3.connect(db_copy)
    conn.execute("PRAGMA writable_schema=ON")
    conn.execute("UPDATE sqlite_master SET sql = 'CREATE INDEX zz ON questions(event)' WHERE name = 'zz'")
    conn.commit()
    conn.close()
    conn = sqlite3.connect(db_copy)
    problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check")]
    conn.close()
    assert len(problems) > 5
    checks, meta = check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))
    assert meta is not None
    assert _by_what(checks)[f"{LABEL} sqlite"] == Check(
        f"{LABEL} sqlite", "FAIL", f"{LABEL}: PRAGMA integrity_check: " + "; ".join(problems[:5])
    )


def test_a_training_cutoff_missing_from_run_meta_is_a_mismatch(
    db_copy: Path, manifest_json: dict[str, Any]
) -> None:
    _set(db_copy, "UPDATE run_meta SET training_cutoff = NULL")
    checks, _ = check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))
    detail = _by_what(checks)[f"{LABEL} run_meta ↔ manifest"].detail
    assert detail == f"{LABEL}: run_meta.training_cutoff is None but manifest.json says '2025-12-15'"


def test_dataset_differences_are_listed_five_at_most(db_copy: Path, manifest_json: dict[str, Any]) -> None:
    for n in range(1, 8):
        _set(db_copy, "UPDATE questions SET answer = 'Z' WHERE id = ?", f"demo-{n:02d}")
    detail = check_dataset(demo_db_path(), _manifest(manifest_json), {LABEL: db_copy})[-1].detail
    assert detail == f"{LABEL}: " + "; ".join(
        f"row id='demo-{n:02d}' column 'answer' differs from the dataset" for n in range(1, 6)
    )


def test_a_sound_database_passes_its_integrity_check_saying_so(
    db_copy: Path, manifest_json: dict[str, Any]
) -> None:
    checks, _ = check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))
    assert _by_what(checks)[f"{LABEL} sqlite"] == Check(f"{LABEL} sqlite", "pass", "integrity_check ok")


def test_text_that_is_not_utf8_in_a_table_is_a_failed_check_not_an_exception(
    db_copy: Path, manifest_json: dict[str, Any]
) -> None:
    _edit_first_template(db_copy, "CAST(x'41ff42' AS TEXT)")
    _set(db_copy, "UPDATE questions SET id = CAST(x'41ff42' AS TEXT) WHERE id = 'demo-01'")
    checks = _by_what(check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))[0])
    templates = checks[f"{LABEL} prompt_templates ↔ run_meta"]
    assert templates.status == "FAIL"
    assert templates.detail.startswith(
        f"{LABEL}: table prompt_templates is not a valid template set "
        "(Could not decode to UTF-8 column 'value'"
    ), templates.detail
    questions = checks[f"{LABEL} questions ↔ manifest filters"]
    assert questions.status == "FAIL"
    assert questions.detail.startswith(f"{LABEL}: table questions cannot be read (Could not decode to UTF-8")


def test_a_changed_template_names_both_hashes_by_16_hex_digits(
    db_copy: Path, manifest_json: dict[str, Any]
) -> None:
    import re

    _set(
        db_copy,
        "UPDATE prompt_templates SET value = value || ' ' "
        "WHERE key = (SELECT MIN(key) FROM prompt_templates)",
    )
    checks = _by_what(check_database(db_copy, LABEL, SLUG, _manifest(manifest_json))[0])
    detail = checks[f"{LABEL} prompt_templates ↔ run_meta"].detail
    assert re.fullmatch(
        rf"{re.escape(LABEL)}: table prompt_templates hashes to [0-9a-f]{{16}}… but "
        rf"run_meta\.prompt_templates_hash is {TEMPLATES[:16]}…",
        detail,
    ), detail
    assert checks[f"{LABEL} run_meta ↔ manifest"] == Check(f"{LABEL} run_meta ↔ manifest", "pass", "")
