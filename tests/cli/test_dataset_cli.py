"""``oracleproto dataset`` through click's CliRunner."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner
from syrupy.assertion import SnapshotAssertion

from oracleproto.cli.main import cli
from oracleproto.dataset.demo import demo_db_path, demo_questions_path, demo_templates_path

TABLE_1 = """\
Question Type    Single-answer  Multi-answer  Total
Yes/No                      37             0     37
Binary Choice                3             0      3
Multiple Choice             32             8     40
Total                       72             8     80
"""


def run(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


def plant_bad_rows(source: Path, target: Path) -> Path:
    """A copy of ``source`` (read in place, written to tmp) with three broken rows."""
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    with sqlite3.connect(target) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM questions ORDER BY end_time, id LIMIT 3")]
        conn.execute("UPDATE questions SET answer = 'Z' WHERE id = ?", (ids[0],))
        conn.execute("UPDATE questions SET options = 'not json' WHERE id = ?", (ids[1],))
        conn.execute("UPDATE questions SET end_time = '31/03/2026' WHERE id = ?", (ids[2],))
    return target


def test_validate_shared_set(shared_db: Path) -> None:
    code, out, err = run("dataset", "validate", shared_db)
    assert (code, err) == (0, "")
    assert out == "80 valid rows in table forecast_eval_set_example\n" + TABLE_1


def test_validate_accepts_the_word_demo() -> None:
    code, out, _ = run("dataset", "validate", "demo")
    assert code == 0
    assert out.startswith("16 valid rows in table questions\n")


def test_validate_reports_one_line_per_planted_bad_row(tmp_path: Path) -> None:
    bad = plant_bad_rows(demo_db_path(), tmp_path / "bad.db")
    code, out, err = run("dataset", "validate", bad)
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "row 'demo-08', column 'answer': answer letter(s) Z outside the options: 2 options allow A..B",
        "row 'demo-02', column 'options': options is not valid JSON (Expecting value at char 0); "
        'expected a JSON array of strings such as ["Yes", "No"]',
        "row 'demo-09', column 'end_time': end_time '31/03/2026' is not a date; "
        "expected YYYY-MM-DD or an ISO 8601 datetime",
        f"{bad}: 3 problem(s) in table questions (16 rows)",
    ]


def test_validate_missing_file_exits_2(tmp_path: Path) -> None:
    code, out, err = run("dataset", "validate", tmp_path / "absent.db")
    assert (code, out) == (2, "")
    assert err == (
        f"error: {tmp_path / 'absent.db'}: 1 problem(s):\n"
        "  - dataset, column 'file': no such file; pass the path of an OracleProto SQLite DB\n"
    )
    assert not (tmp_path / "absent.db").exists()


def test_validate_with_table_option(shared_db: Path) -> None:
    code, _, err = run("dataset", "validate", shared_db, "--table", "dataset_metadata")
    assert code == 2
    assert "table 'dataset_metadata' lacks column(s) id, choice_type" in err


def test_info_shared_text(shared_db: Path, snapshot: SnapshotAssertion) -> None:
    code, out, _ = run("dataset", "info", shared_db)
    assert code == 0
    assert TABLE_1 in out and "end_time range: 2026-03-12..2026-04-14" in out
    assert out == snapshot


def test_info_shared_json(shared_db: Path, snapshot: SnapshotAssertion) -> None:
    code, out, _ = run("dataset", "info", shared_db, "--json")
    assert code == 0
    data = json.loads(out)
    assert data["counts"]["total"] == {"single": 72, "multi": 8, "total": 80}
    assert data == snapshot


def test_info_demo_text(snapshot: SnapshotAssertion) -> None:
    code, out, _ = run("dataset", "info", "demo")
    assert code == 0
    assert out == snapshot


def test_info_of_a_bad_db_exits_2(tmp_path: Path) -> None:
    bad = plant_bad_rows(demo_db_path(), tmp_path / "bad.db")
    code, out, err = run("dataset", "info", bad)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {bad}: 3 problem(s):\n  - row 'demo-08'")


def test_build_then_refuse_then_force(tmp_path: Path) -> None:
    out_db = tmp_path / "demo.db"
    code, out, _ = run(
        "dataset",
        "build",
        demo_questions_path(),
        out_db,
        "--templates",
        demo_templates_path(),
        "--name",
        "oracleproto_demo",
    )
    assert code == 0
    assert out.splitlines()[0] == f"wrote {out_db}: 16 rows in table questions"
    code, out, err = run("dataset", "build", demo_questions_path(), out_db)
    assert (code, out) == (2, "")
    assert f"{out_db} already exists; pass --force to overwrite it" in err
    code, _, _ = run("dataset", "build", demo_questions_path(), out_db, "--force")
    assert code == 0
    code, out, _ = run("dataset", "validate", out_db)
    assert (code, out.splitlines()[0]) == (0, "16 valid rows in table questions")


def test_build_with_bad_templates_file(tmp_path: Path) -> None:
    templates = tmp_path / "t.json"
    templates.write_text('{"agent_role": "x"}')
    code, _, err = run("dataset", "build", demo_questions_path(), tmp_path / "o.db", "--templates", templates)
    assert code == 2
    assert err.count("prompt_reconstruction is missing template key") == 7
    assert not (tmp_path / "o.db").exists()
