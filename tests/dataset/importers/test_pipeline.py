"""The shared pipeline: determinism, --strict, --force, bad input, round trip, and a run from an import."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from oracleproto.dataset.hashes import source_db_hash
from oracleproto.dataset.loader import load_questions
from oracleproto.dataset.models import Question
from oracleproto.scoring.parser import parse_answer
from oracleproto.scoring.parser_mode import ANSWER_PARSERS
from tests.dataset.importers.support import (
    FB_QUESTIONS,
    FB_RESOLUTIONS,
    FUTUREX,
    IMPORTS,
    TABLE,
    TABLE_MAP,
    invoke,
    leftovers,
    run_import,
)


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_same_input_gives_a_byte_identical_db(tmp_path: Path, name: str) -> None:
    first, second = tmp_path / "a" / "x.db", tmp_path / "b" / "x.db"
    first.parent.mkdir()
    second.parent.mkdir()
    assert run_import(name, first)[0] == 0
    assert run_import(name, second)[0] == 0
    assert first.read_bytes() == second.read_bytes()
    assert (first.parent / "x.db.report.json").read_bytes() == (
        second.parent / "x.db.report.json"
    ).read_bytes()
    with sqlite3.connect(first) as conn:  # the bytes carry no clock: the stamp is the last end_time
        (stamp,) = conn.execute("SELECT imported_at_utc FROM dataset_metadata").fetchone()
    assert stamp == f"{load_questions(first)[-1].end_time.isoformat()}T00:00:00Z"


def test_copied_inputs_give_the_same_db(tmp_path: Path) -> None:
    # Input file names and digests are recorded, never their directories.
    copy = tmp_path / "elsewhere" / FUTUREX.name
    copy.parent.mkdir()
    shutil.copy(FUTUREX, copy)
    assert invoke("dataset", "import", "futurex-past", FUTUREX, tmp_path / "a.db")[0] == 0
    assert invoke("dataset", "import", "futurex-past", copy, tmp_path / "b.db")[0] == 0
    assert source_db_hash(tmp_path / "a.db") == source_db_hash(tmp_path / "b.db")


def test_strict_refuses_bad_rows_and_writes_nothing(tmp_path: Path) -> None:
    code, stdout, stderr = run_import("futurex", tmp_path / "x.db", "--strict")
    assert code == 2 and stdout == ""
    assert "row 'fx-011', column 'bad_end_time'" in stderr
    assert "--strict refuses bad rows" in stderr and "Traceback" not in stderr
    assert leftovers(tmp_path) == []


def test_strict_accepts_rows_that_are_only_filtered(tmp_path: Path) -> None:
    # ForecastBench's drops are all by design (unresolved, composed, ...): --strict lets them pass.
    assert run_import("forecastbench", tmp_path / "x.db", "--strict")[0] == 0


def test_existing_output_needs_force(tmp_path: Path) -> None:
    out = tmp_path / "x.db"
    assert run_import("table", out)[0] == 0
    before = out.read_bytes()
    code, _, stderr = run_import("table", out)
    assert code == 2 and "already exists; pass --force" in stderr
    assert run_import("table", out, "--force")[0] == 0
    assert out.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("futurex-past", "missing.jsonl"), "no such file"),
        (("futurex-past", "rows.txt"), "unknown input format '.txt'"),
        (("futurex-past", "list.json"), "record 1 is not a JSON object"),
        (("futurex-past", "broken.jsonl"), "line 2 is not valid JSON"),
        (("futurex-past",), "pass at least one input file and the output DB path"),
        (("oracleproto-db", "list.json", "broken.jsonl"), "takes exactly one source DB"),
    ],
)
def test_bad_input_exits_2_without_output(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    (tmp_path / "rows.txt").write_text("x", encoding="utf-8")
    (tmp_path / "list.json").write_text("[1, 2]", encoding="utf-8")
    (tmp_path / "broken.jsonl").write_text('{"id": "a"}\n{oops\n', encoding="utf-8")
    before = leftovers(tmp_path)
    source, *names = args
    code, stdout, stderr = invoke(
        "dataset", "import", source, *(tmp_path / n for n in names), tmp_path / "out.db"
    )
    assert code == 2 and stdout == ""
    assert message in stderr and "Traceback" not in stderr
    assert leftovers(tmp_path) == before


def test_no_surviving_row_exits_2(tmp_path: Path) -> None:
    code, _, stderr = invoke("dataset", "import", "futurex-past", FUTUREX, tmp_path / "x.db", "--levels", "7")
    assert code == 2 and "no row survived the import (17 dropped: level_excluded)" in stderr
    assert leftovers(tmp_path) == []


def test_bad_min_end_date_exits_2(tmp_path: Path) -> None:
    code, _, stderr = invoke(
        "dataset", "import", "table", TABLE, tmp_path / "x.db", "--map", TABLE_MAP, "--min-end-date", "May"
    )
    assert code == 2 and "--min-end-date 'May' is not a date" in stderr


def _gold_payload(question: Question) -> str:
    if question.question_type == "yes_no":
        return "Yes" if question.answer_text == "A" else "No"
    if question.question_type == "binary_named":
        return question.options[0] if question.answer_text == "A" else question.options[1]
    return question.answer_text


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_import_validate_render_parse_round_trip(tmp_path: Path, name: str) -> None:
    out = tmp_path / "x.db"
    assert run_import(name, out)[0] == 0
    code, _, stderr = invoke("dataset", "validate", out)
    assert code == 0, stderr
    code, rendered, stderr = invoke("render", out, "--json")
    assert code == 0, stderr
    prompts = {p["id"]: p["user_prompt"] for p in json.loads(rendered)["prompts"]}
    questions = load_questions(out)
    assert sorted(prompts) == sorted(q.id for q in questions)
    for question in questions:
        prompt = prompts[question.id]
        assert question.event in prompt
        if question.question_type == "multiple_choice":
            assert all(f"\n{chr(65 + i)}. {label}" in prompt for i, label in enumerate(question.options))
        reply = f"My forecast.\n\\boxed{{{_gold_payload(question)}}}"
        for mode in ANSWER_PARSERS:
            assert parse_answer(reply, question, mode=mode) == question.answer, (question.id, mode)


def test_oracleproto_run_starts_from_an_imported_db(tmp_path: Path) -> None:
    src = tmp_path / "two.csv"
    lines = TABLE.read_text(encoding="utf-8").splitlines()
    src.write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")  # header + 2 questions
    db = tmp_path / "two.db"
    assert invoke("dataset", "import", "table", src, db, "--map", TABLE_MAP)[0] == 0
    runs = tmp_path / "runs"
    code, _, stderr = invoke(
        "sim", "run", "--dataset", db, "--runs-root", runs, "--run-id", "20310101-000000-beef",
        "--personas", "1", "--samples", "1", "--no-detector", "--no-report", "--no-progress",
    )  # fmt: skip
    assert code == 0, stderr
    manifest = json.loads((runs / "20310101-000000-beef" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["hashes"]["source_db"] == source_db_hash(db)
    assert "2 slots" in stderr


def test_import_then_audit_through_the_console_entry_point(tmp_path: Path) -> None:
    entry = "from oracleproto.cli.main import main; main()"
    out = tmp_path / "fb.db"
    args = ["dataset", "import", "forecastbench", str(FB_QUESTIONS), str(FB_RESOLUTIONS), str(out)]
    done = subprocess.run(
        [sys.executable, "-c", entry, *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "import forecastbench: read 12, kept 6, dropped 6" in done.stdout
    audit = [sys.executable, "-c", entry, "dataset", "audit", str(out), "--cutoffs", "m=2031-02-07"]
    done = subprocess.run(audit, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "| m | 2031-02-07 | 6 | 0 |" in done.stdout
    assert "later_date | 1 |" in done.stdout  # "before June 2031" in a market resolved 2031-03-15
