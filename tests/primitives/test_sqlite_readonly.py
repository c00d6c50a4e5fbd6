"""Read-only SQLite opens by a percent-encoded URI: folder names with ``#``, ``?``, ``%`` work."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from oracleproto.analysis.reader import read_run
from oracleproto.primitives.sqlite_readonly import connect_readonly
from oracleproto.verify.demo import find_demo_run


@pytest.mark.parametrize("folder", ["a#b", "what?now", "100% sure", "spaced out"])
def test_a_db_under_an_awkward_folder_name_opens_read_only(tmp_path: Path, folder: str) -> None:
    db = tmp_path / folder / "x.db"
    db.parent.mkdir()
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE t (v INTEGER)")
        con.execute("INSERT INTO t VALUES (7)")
    con.close()
    ro = connect_readonly(db)
    try:
        assert ro.execute("SELECT v FROM t").fetchone() == (7,)
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            ro.execute("INSERT INTO t VALUES (8)")
    finally:
        ro.close()
    assert sorted(p.name for p in db.parent.iterdir()) == ["x.db"]  # no journal, no WAL


def test_a_run_under_a_folder_named_with_a_hash_is_analysed(tmp_path: Path) -> None:
    demo = find_demo_run()
    copy = tmp_path / "runs#1" / demo.name
    shutil.copytree(demo, copy)
    data = read_run(copy)
    assert len(data.models) == 3
