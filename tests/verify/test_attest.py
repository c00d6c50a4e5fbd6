"""``verify/attest.py`` called directly: every digest worked out here with hashlib, every message exact.

The attestation is what ``verify`` holds a published run against, so each of its pieces is pinned
on small hand-made folders and SQLite files: which files are published (and in what order), the
block and cell digests, the self digest, the text, and every way ``load_attestation`` and
``check_files`` report a difference.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from oracleproto.verify.attest import (
    _blocks,
    _cell,
    _cell_changes,
    attestation_text,
    build_attestation,
    check_files,
    database_cells,
    load_attestation,
    published_files,
    write_attestation,
)
from oracleproto.verify.findings import Check, failed, passed


def _sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def _cell_digest(json_text: str) -> str:
    """A cell's digest from the canonical JSON text of its value, written out by hand."""
    return _sha(json_text)[:8]


def _blocks_by_hand(data: bytes) -> list[str]:
    if not data:
        return [_sha(b"")[:16]]
    return [_sha(data[i : i + 4096])[:16] for i in range(0, len(data), 4096)]


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _write(root: Path, rel: str, data: bytes = b"x") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _db(path: Path, *statements: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as conn:
        for statement in statements:
            conn.execute(statement)
        conn.commit()
    return path


def _sql(path: Path, *statements: str) -> None:
    with closing(sqlite3.connect(path)) as conn:
        for statement in statements:
            conn.execute(statement)
        conn.commit()


# --- published_files ---------------------------------------------------------------------------


def test_published_files_lists_files_only_sorted_and_skips_every_unpublished_kind(tmp_path: Path) -> None:
    for rel in [
        "z.txt",
        "b/a.txt",
        "b/attestation.json",  # only the top-level attestation and label are not the run's
        "b/label.json",
        "a.db",
        "analysis/table.md",
        "analysis/audit/x.md",
        "analysis/papers/x.md",  # a folder whose name only starts like an on-demand one
        "cachet/x.txt",
        # not published:
        "attestation.json",
        "label.json",
        "a.db-wal",
        "a.db-shm",
        "a.db-journal",
        ".lock",
        "cassettes/x.yaml.lock",
        "cassettes/.journal/1.jsonl",
        "cache/x.bin",
        "deep/__pycache__/m.pyc",
        ".switch/manifest.json",
        ".switch.staging/manifest.json",
        "x/cache",  # a file named like an ignored folder is ignored too
        "analysis/points-f1/table.md",
        "analysis/paper/table.md",
        "analysis/reference-v4/t/table.md",
    ]:
        _write(tmp_path, rel)
    (tmp_path / "empty-folder").mkdir()
    assert published_files(tmp_path) == [
        "a.db",
        "analysis/audit/x.md",
        "analysis/papers/x.md",
        "analysis/table.md",
        "b/a.txt",
        "b/attestation.json",
        "b/label.json",
        "cachet/x.txt",
        "z.txt",
    ]


# Each of the next three puts one skipped entry in a folder and a published file in a sub-folder
# of it: rglob lists a folder's entries before it goes down into its sub-folders, so a skip that
# ended the walk (instead of going on to the next entry) would lose the deeper file.


def test_published_files_goes_on_after_an_unpublished_top_level_file(tmp_path: Path) -> None:
    _write(tmp_path, "attestation.json")
    _write(tmp_path, "sub/keep.txt")
    assert published_files(tmp_path) == ["sub/keep.txt"]


def test_published_files_goes_on_after_a_side_file(tmp_path: Path) -> None:
    _write(tmp_path, "x.db-wal")
    _write(tmp_path, "sub/keep.txt")
    assert published_files(tmp_path) == ["sub/keep.txt"]


def test_published_files_goes_on_after_an_on_demand_report(tmp_path: Path) -> None:
    _write(tmp_path / "analysis", "paper")  # a file at analysis/paper: inside an ignored folder's name
    _write(tmp_path / "analysis", "sub/keep.md")
    assert published_files(tmp_path) == ["analysis/sub/keep.md"]


def test_published_files_of_an_empty_folder(tmp_path: Path) -> None:
    assert published_files(tmp_path) == []


# --- _blocks and _cell -------------------------------------------------------------------------


def test_blocks_of_empty_data_is_one_digest_of_nothing() -> None:
    assert _blocks(b"") == [_sha(b"")[:16]]


@pytest.mark.parametrize("size", [1, 4095, 4096, 4097, 8192, 8193])
def test_blocks_cut_at_4096_bytes(size: int) -> None:
    data = bytes(i % 251 for i in range(size))
    expected = [_sha(data[i : i + 4096])[:16] for i in range(0, size, 4096)]
    assert _blocks(data) == expected
    assert len(expected) == -(-size // 4096)
    assert all(len(d) == 16 for d in expected)


def test_cell_digests_the_canonical_json_of_the_value() -> None:
    assert _cell(None) == _cell_digest("null") == "74234e98"
    assert _cell(7) == _cell_digest("7")
    assert _cell(2.5) == _cell_digest("2.5")
    assert _cell('é "q"') == _cell_digest('"é \\"q\\""')  # non-ASCII kept, not \u00e9
    assert _cell(b"\x00\xff") == _cell_digest('"00ff"')  # a blob by its hex
    assert _cell("00ff") == _cell(b"\x00\xff")
    assert _cell({"b": 1, "a": [2]}) == _cell_digest('{"a":[2],"b":1}')


# --- database_cells ----------------------------------------------------------------------------


def _sample_db(path: Path) -> Path:
    return _db(
        path,
        "CREATE TABLE zeta (k TEXT, v)",
        "INSERT INTO zeta VALUES ('9', 1), ('10', NULL), ('2', X'00ff')",
        "CREATE TABLE alpha (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, score REAL)",
        "INSERT INTO alpha (name, score) VALUES ('é', 2.5)",
        'CREATE TABLE "my table" (k, x)',
        "INSERT INTO \"my table\" VALUES ('k', 'x')",
        "CREATE VIEW v AS SELECT * FROM zeta",
        "CREATE INDEX zeta_v ON zeta (v)",
    )


def _sample_cells() -> dict[str, Any]:
    d = _cell_digest
    return {
        "alpha": {
            "columns": ["id", "name", "score"],
            "rows": {"1": " ".join([d("1"), d('"é"'), d("2.5")])},
        },
        "my table": {"columns": ["k", "x"], "rows": {"k": " ".join([d('"k"'), d('"x"')])}},
        "zeta": {
            "columns": ["k", "v"],
            "rows": {
                "10": " ".join([d('"10"'), d("null")]),
                "2": " ".join([d('"2"'), d('"00ff"')]),
                "9": " ".join([d('"9"'), d("1")]),
            },
        },
    }


def test_database_cells_per_table_columns_and_rows_in_order(tmp_path: Path) -> None:
    cells = database_cells(_sample_db(tmp_path / "x.db"))
    expected = _sample_cells()
    assert cells == expected
    # sqlite_sequence (from AUTOINCREMENT), the view and the index are not tables of the run.
    assert list(cells) == ["alpha", "my table", "zeta"]
    # Rows sorted by their key as text, not in the table's order ('9', '10', '2').
    assert list(cells["zeta"]["rows"]) == ["10", "2", "9"]


def test_database_cells_of_an_empty_database(tmp_path: Path) -> None:
    assert database_cells(_db(tmp_path / "empty.db", "CREATE TABLE t (a)")) == {
        "t": {"columns": ["a"], "rows": {}}
    }


def test_database_cells_never_creates_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(sqlite3.OperationalError, match="unable to open database file"):
        database_cells(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


# --- build_attestation, attestation_text, write_attestation ------------------------------------


def _entry(data: bytes) -> dict[str, Any]:
    return {"sha256": _sha(data), "size": len(data), "blocks": _blocks_by_hand(data)}


def _sealed(files: dict[str, Any], databases: dict[str, Any]) -> dict[str, Any]:
    body = {"format": "oracleproto-attestation/1", "block_size": 4096, "files": files, "databases": databases}
    return {**body, "self_digest": _sha(_canonical(body))}


def test_build_attestation_of_files_and_a_database(tmp_path: Path) -> None:
    big = bytes(i % 256 for i in range(9000))
    _write(tmp_path, "b.txt", big)
    _write(tmp_path, "a/empty", b"")
    _write(tmp_path, "attestation.json", b"{}")  # not attested: the attestation itself
    _write(tmp_path, "db/x.db-wal", b"w")
    db = _sample_db(tmp_path / "db" / "x.db")
    attestation = build_attestation(tmp_path)
    expected = _sealed(
        {"a/empty": _entry(b""), "b.txt": _entry(big), "db/x.db": _entry(db.read_bytes())},
        {"db/x.db": _sample_cells()},
    )
    assert attestation == expected
    assert list(attestation["files"]) == ["a/empty", "b.txt", "db/x.db"]
    assert len(attestation["files"]["b.txt"]["blocks"]) == 3


def test_build_attestation_of_an_empty_run(tmp_path: Path) -> None:
    body = {"block_size": 4096, "databases": {}, "files": {}, "format": "oracleproto-attestation/1"}
    text = '{"block_size":4096,"databases":{},"files":{},"format":"oracleproto-attestation/1"}'
    assert _canonical(body) == text
    assert build_attestation(tmp_path) == {**body, "self_digest": _sha(text)}


def test_build_attestation_with_an_overlay(tmp_path: Path) -> None:
    _write(tmp_path, "a.txt", b"deleted soon")
    _write(tmp_path, "b.txt", b"old")
    _write(tmp_path, "c.txt", b"kept")
    overlay: dict[str, bytes | None] = {
        "a.txt": None,
        "b.txt": b"new bytes",
        "d/new.txt": b"added",
        "gone.txt": None,  # deleting what is not there: nothing to attest
    }
    attestation = build_attestation(tmp_path, overlay)
    expected = _sealed(
        {"b.txt": _entry(b"new bytes"), "c.txt": _entry(b"kept"), "d/new.txt": _entry(b"added")}, {}
    )
    assert attestation == expected
    assert list(attestation["files"]) == ["b.txt", "c.txt", "d/new.txt"]
    # The files on disk are left as they were.
    assert (tmp_path / "a.txt").read_bytes() == b"deleted soon"
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    "overlay",
    [{"db/x.db": b"x"}, {"a.txt": b"a", "db/x.db": None}, {"x.db": b"x", "z.txt": b"z"}],
)
def test_build_attestation_refuses_to_overlay_a_database(
    tmp_path: Path, overlay: dict[str, bytes | None]
) -> None:
    with pytest.raises(ValueError, match=r"^a database cannot be overlaid$"):
        build_attestation(tmp_path, overlay)


def test_build_attestation_with_an_empty_overlay_is_the_plain_one(tmp_path: Path) -> None:
    _write(tmp_path, "a.txt", b"a")
    expected = _sealed({"a.txt": _entry(b"a")}, {})
    assert build_attestation(tmp_path, {}) == expected
    assert build_attestation(tmp_path, None) == expected


def test_attestation_text_is_sorted_indented_by_one_with_non_ascii_kept() -> None:
    text = attestation_text({"b": 1, "a": ["é", {"d": None}]})
    assert text == '{\n "a": [\n  "é",\n  {\n   "d": null\n  }\n ],\n "b": 1\n}\n'


def test_write_attestation_writes_the_text_of_the_current_files(tmp_path: Path) -> None:
    _write(tmp_path, "a.txt", b"alpha")
    _write(tmp_path, "attestation.json", b"stale seal")  # replaced, and never attests itself
    _write(tmp_path, "label.json", b'{"name": "mine"}')
    path = write_attestation(tmp_path)
    assert path == tmp_path / "attestation.json"
    entry = _entry(b"alpha")
    body = {
        "block_size": 4096,
        "databases": {},
        "files": {"a.txt": entry},
        "format": "oracleproto-attestation/1",
    }
    self_digest = _sha(_canonical(body))
    assert path.read_text(encoding="utf-8") == (
        "{\n"
        ' "block_size": 4096,\n'
        ' "databases": {},\n'
        ' "files": {\n'
        '  "a.txt": {\n'
        '   "blocks": [\n'
        f'    "{entry["blocks"][0]}"\n'
        "   ],\n"
        f'   "sha256": "{entry["sha256"]}",\n'
        '   "size": 5\n'
        "  }\n"
        " },\n"
        ' "format": "oracleproto-attestation/1",\n'
        f' "self_digest": "{self_digest}"\n'
        "}\n"
    )
    # Atomic: nothing but the three files (no temporary sibling left behind).
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "attestation.json", "label.json"]


def test_write_attestation_reproduces_the_committed_demo_seal(demo_copy: Path) -> None:
    committed = (demo_copy / "attestation.json").read_bytes()
    (demo_copy / "attestation.json").unlink()
    assert write_attestation(demo_copy).read_bytes() == committed


# --- load_attestation --------------------------------------------------------------------------


def test_load_attestation_accepts_its_own_seal(tmp_path: Path) -> None:
    seal = _sealed({"a": _entry(b"a"), "b": _entry(b"b")}, {})
    path = tmp_path / "seal.json"
    path.write_text(json.dumps(seal), encoding="utf-8")
    data, check = load_attestation(path)
    assert data == seal
    assert check == passed("seal.json", "2 files attested")


def _load_failure(path: Path, data: bytes) -> Check:
    path.write_bytes(data)
    loaded, check = load_attestation(path)
    assert loaded is None
    return check


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"", "Expecting value: line 1 column 1 (char 0)"),
        (b'{"format": ', "Expecting value: line 1 column 12 (char 11)"),
        (b'"\xff"', "'utf-8' codec can't decode byte 0xff in position 1: invalid start byte"),
    ],
)
def test_load_attestation_that_is_not_json(tmp_path: Path, data: bytes, reason: str) -> None:
    check = _load_failure(tmp_path / "seal.json", data)
    assert check == failed(
        "seal.json", f"seal.json: not valid JSON ({reason}); the attestation itself is damaged"
    )


@pytest.mark.parametrize(
    "document",
    [
        [],
        ["oracleproto-attestation/1"],
        "oracleproto-attestation/1",
        {},
        {"format": "oracleproto-attestation/2", "files": {}},
        {"format": None},
    ],
)
def test_load_attestation_of_another_document(tmp_path: Path, document: Any) -> None:
    check = _load_failure(tmp_path / "seal.json", json.dumps(document).encode())
    assert check == failed("seal.json", "seal.json: not an oracleproto-attestation/1 document")


def test_load_attestation_whose_self_digest_does_not_match(tmp_path: Path) -> None:
    seal = _sealed({"a": _entry(b"a")}, {})
    damaged = "seal.json: its self_digest does not match its content; the attestation is damaged"
    changed = {**seal, "files": {"a": _entry(b"b")}}
    assert _load_failure(tmp_path / "seal.json", json.dumps(changed).encode()) == failed("seal.json", damaged)
    missing = {k: v for k, v in seal.items() if k != "self_digest"}
    assert _load_failure(tmp_path / "seal.json", json.dumps(missing).encode()) == failed("seal.json", damaged)
    # The digest is of the body without self_digest: one over the whole document does not match.
    whole = {**seal, "self_digest": _sha(_canonical(missing | {"self_digest": None}))}
    assert _load_failure(tmp_path / "seal.json", json.dumps(whole).encode()) == failed("seal.json", damaged)


_INVALID = "seal.json: not a valid oracleproto-attestation/1 document: "


def _resealed(body: dict[str, Any]) -> bytes:
    """A hand-made attestation with a correct self digest: only its shape can fail it."""
    return json.dumps({**body, "self_digest": _sha(_canonical(body))}).encode()


@pytest.mark.parametrize(
    ("body", "problems"),
    [
        ({}, "files: Field required; databases: Field required"),
        ({"files": {}}, "databases: Field required"),
        (
            {"files": {"a": {"sha256": "x", "size": "1", "blocks": "ab"}}, "databases": []},
            "files.a.size: Input should be a valid integer; files.a.blocks: Input should be a valid list; "
            "databases: Input should be a valid dictionary",
        ),
        (
            {"files": {"a": {"sha256": 1, "size": True, "blocks": [1]}}, "databases": {}},
            "files.a.sha256: Input should be a valid string; files.a.size: Input should be a valid integer; "
            "files.a.blocks.0: Input should be a valid string",
        ),
        (
            {"files": [], "databases": {"x.db": {"t": {"columns": "k", "rows": {"1": 5}}}}},
            "files: Input should be a valid dictionary; databases.x.db.t.columns: Input should be a valid "
            "list; databases.x.db.t.rows.1: Input should be a valid string",
        ),
        (
            {
                "files": {},
                "databases": {"x.db": {"t": {"columns": ["k", "v"], "rows": {"0": "a b", "1": "a"}}}},
            },
            "databases.x.db.t: Value error, row '1' has 1 cell digests for 2 columns",
        ),
        (
            {"files": {}, "databases": {"x.db": {"t": {"columns": ["k"], "rows": {"2": "a b"}}}}},
            "databases.x.db.t: Value error, row '2' has 2 cell digests for 1 columns",
        ),
    ],
)
def test_load_attestation_checks_the_shape_verify_reads(
    tmp_path: Path, body: dict[str, Any], problems: str
) -> None:
    document = {"format": "oracleproto-attestation/1", **body}
    check = _load_failure(tmp_path / "seal.json", _resealed(document))
    assert check == failed("seal.json", _INVALID + problems)


def test_load_attestation_accepts_tables_of_any_size(tmp_path: Path) -> None:
    d = _cell_digest
    seal = _sealed(
        {"x.db": _entry(b"x")},
        {
            "x.db": {
                "empty": {"columns": ["k"], "rows": {}},
                "none": {"columns": [], "rows": {"": ""}},
                "t": {"columns": ["k", "v"], "rows": {"1": d("1") + " " + d("2"), "2": "a  b"}},
            }
        },
    )
    path = tmp_path / "seal.json"
    path.write_text(json.dumps(seal), encoding="utf-8")
    assert load_attestation(path) == (seal, passed("seal.json", "1 files attested"))


def test_verify_fails_a_resealed_attestation_whose_rows_lack_a_cell(demo_copy: Path) -> None:
    """A row with a cell digest too few, resealed, used to raise ValueError out of ``verify``."""
    from oracleproto.verify import verify_run

    path = demo_copy / "attestation.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    body = {k: v for k, v in document.items() if k != "self_digest"}
    rel = sorted(body["databases"])[0]
    rows = body["databases"][rel]["questions"]["rows"]
    key = sorted(rows)[0]
    rows[key] = rows[key].rsplit(" ", 1)[0]
    path.write_bytes(_resealed(body))
    with closing(sqlite3.connect(demo_copy / rel)) as conn:
        conn.execute("UPDATE questions SET event = event || '!' WHERE id = ?", (key,))
        conn.commit()
    report = verify_run(demo_copy)
    columns = len(body["databases"][rel]["questions"]["columns"])
    expected = f"row {key!r} has {columns - 1} cell digests for {columns} columns"
    (check,) = [c for c in report.checks if c.what == "attestation.json"]
    assert check == failed(
        "attestation.json",
        "attestation.json: not a valid oracleproto-attestation/1 document: "
        f"databases.{rel}.questions: Value error, {expected}",
    )
    assert not [c for c in report.checks if c.what.startswith("file ")]


# --- _cell_changes -----------------------------------------------------------------------------


def test_cell_changes_of_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    path.write_bytes(b"not a database, only text " * 200)
    assert _cell_changes(path, {}) == ["not readable as SQLite (file is not a database)"]


def test_cell_changes_of_a_missing_database(tmp_path: Path) -> None:
    assert _cell_changes(tmp_path / "x.db", {}) == ["not readable as SQLite (unable to open database file)"]


def test_cell_changes_of_a_text_cell_that_is_not_utf8(tmp_path: Path) -> None:
    path = _db(tmp_path / "x.db", "CREATE TABLE t (k, b)", "INSERT INTO t VALUES ('1', 'fine')")
    recorded = database_cells(path)
    _sql(path, "UPDATE t SET b = CAST(X'66FF' AS TEXT)")
    assert _cell_changes(path, recorded) == [
        "not readable as SQLite (Could not decode to UTF-8 column 'b' with text 'f\ufffd')"
    ]


def test_cell_changes_of_an_unchanged_database(tmp_path: Path) -> None:
    path = _sample_db(tmp_path / "x.db")
    assert _cell_changes(path, _sample_cells()) == []


def test_cell_changes_names_tables_rows_and_columns(tmp_path: Path) -> None:
    path = _db(
        tmp_path / "x.db",
        "CREATE TABLE a_gone (k)",
        "CREATE TABLE b_cols (k, v)",
        "CREATE TABLE c_rows (k, x, y, z)",
        "INSERT INTO c_rows VALUES ('1', 1, 1, 1), ('10', 1, 1, 1), ('2', 1, 1, 1), ('4', 1, 1, 1)",
        "CREATE TABLE d_same (k)",
        "INSERT INTO d_same VALUES ('s')",
    )
    recorded = database_cells(path)
    _sql(
        path,
        "DROP TABLE a_gone",
        "CREATE TABLE a_new (k)",
        "ALTER TABLE b_cols RENAME COLUMN v TO w",
        "UPDATE c_rows SET y = 2 WHERE k = '1'",
        "UPDATE c_rows SET x = 2, z = 2 WHERE k = '10'",
        "DELETE FROM c_rows WHERE k = '2'",
        "INSERT INTO c_rows VALUES ('3', 1, 1, 1)",
        "CREATE TABLE e_new (k)",
    )
    assert _cell_changes(path, recorded) == [
        "table a_gone removed",
        "table a_new added",
        "table b_cols columns changed",
        "table c_rows row '1' column y",
        "table c_rows row '10' column x, z",
        "table c_rows row '2' removed",
        "table c_rows row '3' added",
        "table e_new added",
    ]


def test_cell_changes_goes_on_after_an_unchanged_row(tmp_path: Path) -> None:
    path = _db(
        tmp_path / "x.db",
        "CREATE TABLE t (k, v)",
        "INSERT INTO t VALUES ('0', 'same'), ('1', 'old'), ('2', 'same'), ('3', 'old')",
    )
    recorded = database_cells(path)
    _sql(path, "UPDATE t SET v = 'new' WHERE k IN ('1', '3')")
    assert _cell_changes(path, recorded) == ["table t row '1' column v", "table t row '3' column v"]


def test_cell_changes_goes_on_after_a_table_whose_columns_changed(tmp_path: Path) -> None:
    path = _db(tmp_path / "x.db", "CREATE TABLE a (k, v)", "CREATE TABLE b (k)", "INSERT INTO b VALUES ('1')")
    recorded = database_cells(path)
    _sql(path, "ALTER TABLE a ADD COLUMN w", "UPDATE b SET k = '2'")
    assert _cell_changes(path, recorded) == [
        "table a columns changed",
        "table b row '1' removed",
        "table b row '2' added",
    ]


def test_cell_changes_against_a_hand_written_record(tmp_path: Path) -> None:
    path = _db(tmp_path / "x.db", "CREATE TABLE t (id, v)", "INSERT INTO t VALUES (5, 'now')")
    d = _cell_digest
    recorded = {"t": {"columns": ["id", "v"], "rows": {"5": d("5") + " " + d('"then"')}}}
    assert _cell_changes(path, recorded) == ["table t row '5' column v"]
    recorded["t"]["rows"]["5"] = d("5") + " " + d('"now"')
    assert _cell_changes(path, recorded) == []
    # A key of another type digests differently in its cell, not in its name: '5' is the row key.
    recorded["t"]["rows"]["5"] = d('"5"') + " " + d('"now"')
    assert _cell_changes(path, recorded) == ["table t row '5' column id"]


# --- check_files -------------------------------------------------------------------------------


def _attested(root: Path) -> dict[str, Any]:
    """The attestation of ``root`` as build_attestation would write it, worked out by hand."""
    files = {rel: _entry((root / rel).read_bytes()) for rel in published_files(root)}
    return {"format": "oracleproto-attestation/1", "block_size": 4096, "files": files, "databases": {}}


def test_check_files_of_an_unchanged_run(tmp_path: Path) -> None:
    _write(tmp_path, "a.txt", b"a")
    _write(tmp_path, "b/c.txt", b"c")
    assert check_files(tmp_path, _attested(tmp_path)) == [
        passed("files ↔ attestation", "2 files byte-identical")
    ]


def test_check_files_ignores_unpublished_newcomers(tmp_path: Path) -> None:
    _write(tmp_path, "a.txt", b"a")
    attestation = _attested(tmp_path)
    _write(tmp_path, "a.db-wal", b"w")
    _write(tmp_path, "label.json", b"{}")
    assert check_files(tmp_path, attestation) == [passed("files ↔ attestation", "1 files byte-identical")]


def test_check_files_missing_changed_and_extra(tmp_path: Path) -> None:
    _write(tmp_path, "a.txt", b"0123456789")
    _write(tmp_path, "b.txt", b"b")
    _write(tmp_path, "c.txt", b"c")
    attestation = _attested(tmp_path)
    (tmp_path / "a.txt").unlink()
    (tmp_path / "b.txt").unlink()
    (tmp_path / "b.txt").mkdir()  # a folder where a file was attested is no file
    _write(tmp_path, "c.txt", b"C")
    for i in range(11):
        _write(tmp_path, f"extra/{i:02}.txt", b"e")
    assert check_files(tmp_path, attestation) == [
        failed("file a.txt", "a.txt: attested but missing"),
        failed("file b.txt", "b.txt: attested but missing"),
        failed("file c.txt", "c.txt: sha256 differs from the attestation at bytes 0–0"),
        failed(
            "unattested files",
            "files not in the attestation: " + ", ".join(f"extra/{i:02}.txt" for i in range(10)),
        ),
    ]


def test_check_files_locates_changed_blocks_first_three_only(tmp_path: Path) -> None:
    data = bytearray(b"." * (4 * 4096 + 100))
    _write(tmp_path, "big.bin", bytes(data))
    _write(tmp_path, "tail.bin", bytes(data))
    attestation = _attested(tmp_path)
    for offset in (5, 4096, 3 * 4096 - 1, 4 * 4096 + 99):
        data[offset] = ord("!")
    _write(tmp_path, "big.bin", bytes(data))
    tail = bytearray(b"." * (4 * 4096 + 100))
    tail[4 * 4096 + 50] = ord("!")
    _write(tmp_path, "tail.bin", bytes(tail))
    assert check_files(tmp_path, attestation) == [
        failed(
            "file big.bin",
            "big.bin: sha256 differs from the attestation at bytes 0–4095, bytes 4096–8191, bytes 8192–12287",
        ),
        failed("file tail.bin", "tail.bin: sha256 differs from the attestation at bytes 16384–16483"),
    ]


def test_check_files_reports_a_size_change(tmp_path: Path) -> None:
    _write(tmp_path, "grown.txt", b"0123456789")
    _write(tmp_path, "long.txt", b"a" * 4096)
    _write(tmp_path, "short.txt", b"a" * 4100)
    _write(tmp_path, "empty.txt", b"e")
    attestation = _attested(tmp_path)
    _write(tmp_path, "grown.txt", b"0123456789ab")
    _write(tmp_path, "long.txt", b"a" * 4100)
    _write(tmp_path, "short.txt", b"a" * 4096)
    _write(tmp_path, "empty.txt", b"")
    assert check_files(tmp_path, attestation) == [
        failed("file empty.txt", "empty.txt: sha256 differs from the attestation at size 1 → 0"),
        failed(
            "file grown.txt", "grown.txt: sha256 differs from the attestation at bytes 0–11, size 10 → 12"
        ),
        # The first block is the same: only the size says where.
        failed("file long.txt", "long.txt: sha256 differs from the attestation at size 4096 → 4100"),
        failed("file short.txt", "short.txt: sha256 differs from the attestation at size 4100 → 4096"),
    ]


def test_check_files_at_an_unknown_offset(tmp_path: Path) -> None:
    _write(tmp_path, "a.txt", b"a")
    attestation = _attested(tmp_path)
    # Same size and blocks, another whole-file digest: nothing says where.
    attestation["files"]["a.txt"]["sha256"] = "0" * 64
    assert check_files(tmp_path, attestation) == [
        failed("file a.txt", "a.txt: sha256 differs from the attestation at unknown offset")
    ]


def _bad_blocks(before: bytes, after: bytes) -> str:
    """Where two files differ as check_files words it, worked out without attest.py."""
    count = min(max(1, -(-len(before) // 4096)), max(1, -(-len(after) // 4096)))
    starts = [
        i * 4096
        for i in range(count)
        if before[i * 4096 : (i + 1) * 4096] != after[i * 4096 : (i + 1) * 4096]
    ]
    where = [f"bytes {i}–{min(i + 4096, len(after)) - 1}" for i in starts[:3]]
    if len(before) != len(after):
        where.append(f"size {len(before)} → {len(after)}")
    return ", ".join(where)


def _db_attested(root: Path, rel: str) -> dict[str, Any]:
    attestation = _attested(root)
    attestation["databases"] = {rel: database_cells(root / rel)}
    return attestation


def test_check_files_names_the_changed_cells_of_a_database(tmp_path: Path) -> None:
    db = _db(
        tmp_path / "db" / "x.db",
        "CREATE TABLE t (k, a, b, c, d, e, f)",
        "INSERT INTO t VALUES ('1', 0, 0, 0, 0, 0, 0), ('2', 0, 0, 0, 0, 0, 0)",
    )
    attestation = _db_attested(tmp_path, "db/x.db")
    before = db.read_bytes()
    _sql(db, "UPDATE t SET b = 1 WHERE k = '1'")
    after = db.read_bytes()
    assert check_files(tmp_path, attestation) == [
        failed(
            "file db/x.db",
            f"db/x.db: sha256 differs from the attestation at {_bad_blocks(before, after)}; "
            "changed: table t row '1' column b",
        )
    ]
    # Six changed rows: the first five are named.
    _sql(
        db,
        "CREATE TABLE u (k)",
        "INSERT INTO u VALUES ('1'), ('2'), ('3'), ('4')",
        "UPDATE t SET a = 1 WHERE k = '2'",
    )
    after = db.read_bytes()
    assert check_files(tmp_path, attestation) == [
        failed(
            "file db/x.db",
            f"db/x.db: sha256 differs from the attestation at {_bad_blocks(before, after)}; "
            "changed: table t row '1' column b; table t row '2' column a; table u added",
        )
    ]
    attestation["databases"]["db/x.db"]["u"] = {"columns": ["k"], "rows": {}}
    assert check_files(tmp_path, attestation)[0].detail.endswith(
        "; changed: table t row '1' column b; table t row '2' column a; table u row '1' added; "
        "table u row '2' added; table u row '3' added"
    )


def test_check_files_says_when_no_cell_of_a_database_changed(tmp_path: Path) -> None:
    db = _db(tmp_path / "db" / "x.db", "CREATE TABLE t (k, v)", "INSERT INTO t VALUES ('1', 'a')")
    _write(tmp_path, "notes.db.txt", b"n")
    attestation = _db_attested(tmp_path, "db/x.db")
    before = db.read_bytes()
    _sql(db, "CREATE INDEX t_v ON t (v)")  # an index is no table: every cell is as it was
    _write(tmp_path, "notes.db.txt", b"N")
    assert check_files(tmp_path, attestation) == [
        failed(
            "file db/x.db",
            f"db/x.db: sha256 differs from the attestation at {_bad_blocks(before, db.read_bytes())}; "
            "no cell changed (header, index or free-page bytes)",
        ),
        failed("file notes.db.txt", "notes.db.txt: sha256 differs from the attestation at bytes 0–0"),
    ]


def test_check_files_of_a_database_that_no_longer_opens(tmp_path: Path) -> None:
    db = _db(tmp_path / "x.db", "CREATE TABLE t (k)")
    attestation = _db_attested(tmp_path, "x.db")
    before = db.read_bytes()
    db.write_bytes(b"?" * len(before))
    assert check_files(tmp_path, attestation) == [
        failed(
            "file x.db",
            f"x.db: sha256 differs from the attestation at {_bad_blocks(before, db.read_bytes())}; "
            "changed: not readable as SQLite (file is not a database)",
        )
    ]


_ESCAPES = (
    "escapes its folder (absolute path, '..', backslash or empty name); refusing to follow it — the "
    "file naming it was edited or crafted"
)


@pytest.mark.parametrize(
    "name", ["../outside.txt", "/etc/hostname", "a/../../outside.txt", "a\\b.txt", "link.txt"]
)
def test_check_files_reads_no_file_outside_the_run(tmp_path: Path, name: str) -> None:
    # A crafted attestation (its self digest recomputed) naming a file outside the run: verify reads
    # nothing there and fails that file's check instead.
    run = tmp_path / "run"
    _write(run, "a.txt", b"a")
    _write(tmp_path, "outside.txt", b"secret")
    _write(run, "z.txt", b"new")  # after the refused name in order: still checked
    files = {"a.txt": _entry(b"a"), name: _entry(b"secret"), "z.txt": _entry(b"old")}
    attestation = {"files": files, "databases": {}}
    if name == "link.txt":
        (run / name).symlink_to(tmp_path / "outside.txt")
        detail = (
            f"attestation.json: attested file {run / name} leads outside {run} (to "
            f"{(tmp_path / 'outside.txt').resolve()}, through a symlink); refusing to follow it"
        )
    else:
        detail = f"attestation.json: attested file {name!r} {_ESCAPES}"
    changed = failed("file z.txt", "z.txt: sha256 differs from the attestation at bytes 0–2")
    assert check_files(run, attestation) == [failed(f"file {name}", detail), changed]
