"""``dataset import`` killed between its DB and its report never leaves a mismatched pair.

The report describes one DB (``output.source_db_hash``). The import removes the old report,
writes the DB, then the report, so a kill (kill point ``import-db``: real SIGKILL in a
subprocess) leaves a DB without a report; the next import names it and asks for ``--force``,
which redoes the pair.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from oracleproto.dataset.hashes import source_db_hash
from oracleproto.primitives.killpoints import ENV_VAR
from tests.dataset.importers.support import FUTUREX, IMPORTS, read_report, run_import


def _killed_import(name: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    source, inputs, options = IMPORTS[name]
    entry = "from oracleproto.cli.main import main; main()"
    args = ["dataset", "import", source, *map(str, inputs), str(out), *options, *extra]
    env = {**os.environ, ENV_VAR: "import-db@KILL"}
    return subprocess.run(
        [sys.executable, "-c", entry, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def test_a_kill_between_db_and_report_leaves_no_mismatched_pair(tmp_path: Path) -> None:
    out = tmp_path / "x.db"
    report = out.with_name("x.db.report.json")
    assert run_import("table", out)[0] == 0
    old_hash = source_db_hash(out)
    assert read_report(out)["output"]["source_db_hash"] == old_hash

    killed = _killed_import("futurex", out, "--force")  # another input: another DB

    assert killed.returncode == -9, killed.stderr
    assert source_db_hash(out) != old_hash and not report.exists()  # never the old report beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.db"]  # no temp file either

    code, stdout, stderr = run_import("futurex", out)
    assert code == 2 and stdout == ""
    assert f"{out}: " in stderr
    assert (
        "already exists and has no construction report x.db.report.json (an import into it was stopped "
        in (stderr)
    )
    assert "pass --force to redo the import" in stderr

    assert run_import("futurex", out, "--force")[0] == 0
    assert read_report(out)["output"]["source_db_hash"] == source_db_hash(out)


def test_a_report_of_another_db_is_named(tmp_path: Path) -> None:
    out = tmp_path / "x.db"
    assert run_import("table", out)[0] == 0
    out.write_bytes(FUTUREX.read_bytes())  # the DB replaced by hand
    code, _, stderr = run_import("table", out)
    assert code == 2
    assert "already exists and does not match its construction report x.db.report.json" in stderr


def test_a_finished_import_still_just_needs_force(tmp_path: Path) -> None:
    out = tmp_path / "x.db"
    assert run_import("table", out)[0] == 0
    code, _, stderr = run_import("table", out)
    assert code == 2 and "already exists; pass --force to overwrite it" in stderr
