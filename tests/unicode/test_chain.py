"""Issue 28 §1: every untrusted field × every hostile input × the whole chain, on one recorded run.

record → replay (byte for byte) → verify → report → export → view → audit sample / label /
score → bundle export / import. Each step completes, or refuses the one item holding the bad
value with a message; never a traceback, never exit 70. The measured table is printed (run with
``-s`` to see it) and written to ``unicode_table.md`` in the test's temporary folder.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.unicode.chain import Chain, record_verdicts
from tests.unicode.cli import Outcome, oracleproto
from tests.unicode.evidence import field_values, longest_page, refused_pages
from tests.unicode.inputs import BIG, COLUMNS, COMMANDS, INPUTS
from tests.unicode.recording import MODEL, HostileRun
from tests.unicode.table import NA, REFUSED, Table

pytestmark = pytest.mark.slow


def _refusals(run: HostileRun, tmp: Path) -> dict[str, Outcome]:
    """The values refused before a run records them: display names and a source DB cell of bytes."""
    out: dict[str, Outcome] = {}
    env = (run.run_dir.parent.parent / "run.env").read_text(encoding="utf-8")
    for column, text in INPUTS.items():
        if column == "invalid UTF-8":
            names = tmp / "names-bytes.json"
            names.write_bytes(b'{"' + MODEL.encode() + b'": "Care \xff\xfe"}')
            out[f"display names/{column}"] = oracleproto(
                "report", run.run_dir, "--names", names, "--out", tmp / "r"
            )
            continue
        escaped = json.dumps({MODEL: f"Care {text}"})  # JSON escapes: one line in a .env file
        env_file = tmp / f"names-{len(out)}.env"
        env_file.write_text(f"{env}MODEL_DISPLAY_NAMES='{escaped}'\n", encoding="utf-8")
        out[f"display names/{column}"] = oracleproto(
            "run", "--record", "--env-file", env_file, "--runs-root", tmp / "runs", "--no-progress"
        )
    for name, column_sql in (("question text", "event"), ("option labels", "options")):
        damaged = tmp / f"damaged-{column_sql}.db"
        shutil.copyfile(run.dataset, damaged)
        con = sqlite3.connect(damaged)
        # The first label (or the question) as bytes that are not UTF-8, as a foreign tool may write.
        value = b'["Yes \xff\xfe", "No"]' if column_sql == "options" else b"Will it happen \xff\xfe?"
        con.execute(f"UPDATE questions SET {column_sql} = CAST(? AS TEXT) WHERE id = 'demo-02'", (value,))
        con.commit()
        con.close()
        out[f"{name}/invalid UTF-8"] = oracleproto("dataset", "validate", damaged)
    return out


def _refused(outcome: Outcome) -> bool:
    """Exit 2 with a message naming what was wrong (a display name, or bytes that are not UTF-8)."""
    said = ("holds a line break or control character", "not UTF-8 text", "not valid UTF-8")
    return outcome.clean and outcome.code == 2 and any(phrase in outcome.output for phrase in said)


def _names_at_report(chain: Chain, refusals: dict[str, Outcome], tmp: Path) -> None:
    """Display names reach report and export through --names: each hostile name is refused there."""
    for column, text in INPUTS.items():
        names = tmp / f"names-{column.replace('/', '-')}.json"
        if column == "invalid UTF-8":
            names.write_bytes(b'{"' + MODEL.encode() + b'": "Care \xff\xfe"}')
        else:
            names.write_text(json.dumps({MODEL: f"Care {text}"}), encoding="utf-8")
        for command, args in (("report", ("--out", tmp / "r")), ("export", ("--out", tmp / "e.jsonl"))):
            outcome = oracleproto(command, chain.run.run_dir, "--names", names, *args)
            refused = _refused(outcome)
            chain.table.cells[("display names", column, command)] = REFUSED if refused else "FAIL"
            if not refused:
                chain.table.notes.append(f"not refused: {outcome.describe()}")
    for command in COMMANDS:
        if command not in ("record", "report", "export"):
            for column in COLUMNS:
                chain.table.cells[("display names", column, command)] = NA
    for command in COMMANDS:
        chain.table.cells[("display names", BIG, command)] = NA


def test_every_hostile_value_through_the_whole_chain(hostile_run: HostileRun, tmp_path: Path) -> None:
    record = hostile_run.record
    assert record.clean and record.code == 0, record.describe()
    table = Table()
    chain = Chain(hostile_run, tmp_path, table)
    refusals = _refusals(hostile_run, tmp_path)
    record_verdicts(
        chain,
        {key: _refused(outcome) for key, outcome in refusals.items()},
        field_values(hostile_run.run_dir),
        refused_pages(hostile_run.run_dir),
        longest_page(hostile_run.run_dir),
    )
    for outcome in refusals.values():
        if not _refused(outcome):
            table.notes.append(f"not refused: {outcome.describe()}")
    chain.replay()
    chain.verify()
    chain.report()
    chain.export()
    chain.view()
    chain.audit_sample()
    chain.audit_label()
    chain.audit_score()
    chain.bundle()
    _names_at_report(chain, refusals, tmp_path)
    table.notes.append(chain.timing_note(record))
    text = table.render()
    (tmp_path / "unicode_table.md").write_text(text, encoding="utf-8")
    print(text)
    assert not table.failures(), text
