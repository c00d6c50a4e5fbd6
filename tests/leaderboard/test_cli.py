"""``oracleproto leaderboard``: in-process with CliRunner, and once as the real console script."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from tests.leaderboard.panel import ONE, RUN_A, RUN_B, two_runs
from tests.view.test_page import embedded

BIN = Path(sys.executable).parent / "oracleproto"
DEMO_RUN = "20260101-000000-de00"


def _board(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["leaderboard", *args])
    return result.exit_code, result.output


def test_the_demo_board(tmp_path: Path) -> None:
    out = tmp_path / "board"
    result = CliRunner().invoke(cli, ["leaderboard", "demo", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    shown = re.escape(str(out / "leaderboard.html"))
    assert re.fullmatch(rf"wrote {shown} \(\d+ KiB\) and 2 more file\(s\)\n", result.stdout)
    assert "· " not in result.stderr  # --quiet: no stages (the notes stay)
    assert sorted(p.name for p in out.iterdir()) == [
        ".oracleproto-leaderboard",
        "leaderboard.csv",
        "leaderboard.html",
        f"oracleproto-view-{DEMO_RUN}.html",
    ]
    document = embedded((out / "leaderboard.html").read_text(encoding="utf-8"))
    assert [m["slug"] for m in document["models"]] == [
        f"sim/{m}::r5::c4" for m in ("careful", "hasty", "sloppy")
    ]
    assert (
        embedded((out / f"oracleproto-view-{DEMO_RUN}.html").read_text(encoding="utf-8"))["source"] == "demo"
    )


def test_stages_and_notes_go_to_stderr(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["leaderboard", "demo", "--out", str(tmp_path / "b"), "--no-views"])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[:3] == [
        "· reading the runs",
        "· points-f1 scores, resamples, pairwise tests, ranks",
        f"· writing {tmp_path / 'b'}",
    ]
    assert "note: points-f1 pairwise tests: 2 of 3 pairs significant under Holm" in result.stderr
    assert result.stdout.endswith("and 1 more file(s)\n")
    assert not (tmp_path / "b" / f"oracleproto-view-{DEMO_RUN}.html").exists()


def test_names_file_sets_the_shown_names(tmp_path: Path) -> None:
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"sim/careful": "Careful <b>", "sim/absent": "Nobody"}), encoding="utf-8")
    out = tmp_path / "board"
    result = CliRunner().invoke(
        cli, ["leaderboard", "demo", "--out", str(out), "--names", str(names), "--no-views"]
    )
    assert result.exit_code == 0, result.output
    assert "note: --names names 'sim/absent', which is no model of these runs" in result.stderr
    assert (
        embedded((out / "leaderboard.html").read_text(encoding="utf-8"))["models"][0]["name"] == "Careful <b>"
    )
    assert "1,Careful <b>,sim/careful::r5::c4," in (out / "leaderboard.csv").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("missing-run-dir", "run directory not found"),
        ("20991231-000000-abcd", "run directory not found"),
    ],
)
def test_a_run_that_does_not_exist_exits_2_and_writes_nothing(
    tmp_path: Path, target: str, message: str
) -> None:
    out = tmp_path / "board"
    code, output = _board("demo", target, "--out", str(out), "--runs-root", str(tmp_path))
    assert code == 2
    assert f"error: {target}: {message}" in output
    assert "Traceback" not in output
    assert list(tmp_path.iterdir()) == []


def test_out_that_is_a_file_or_a_foreign_folder_exits_2(tmp_path: Path) -> None:
    file = tmp_path / "board.html"
    file.write_text("mine", encoding="utf-8")
    code, output = _board("demo", "--out", str(file))
    assert code == 2 and "is a file" in output
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine", encoding="utf-8")
    code, output = _board("demo", "--out", str(folder))
    assert code == 2
    assert "holds other files and no earlier leaderboard" in output and "Traceback" not in output
    assert file.read_text(encoding="utf-8") == "mine" and [p.name for p in folder.iterdir()] == ["keep.txt"]


def test_incomparable_runs_exit_2_and_write_nothing(tmp_path: Path) -> None:
    a, b = two_runs(tmp_path / "runs", sampling_n=2)
    out = tmp_path / "board"
    code, output = _board(str(a), str(b), "--out", str(out))
    assert code == 2
    assert "error: these runs cannot stand on one leaderboard" in output
    assert f"run {RUN_B} ({b}) differs from run {RUN_A}:\n    SAMPLING_N: 3 vs 2" in output
    assert "Traceback" not in output and not out.exists()


def test_the_console_script_on_a_panel_of_runs(tmp_path: Path) -> None:
    """A real process: two runs merged into one board, exit 0; the same runs with a different n, exit 2."""
    a, b = two_runs(tmp_path / "runs")
    out = tmp_path / "board"
    done = subprocess.run(
        [str(BIN), "leaderboard", str(a), str(b), "--out", str(out), "--quiet"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out}/leaderboard.html (") and done.stdout.endswith(
        "and 3 more file(s)\n"
    )
    rows = (out / "leaderboard.csv").read_text(encoding="utf-8").splitlines()
    assert [r.split(",")[1] for r in rows[1:]] == [ONE, "vendor-b/two::r5::c4", "vendor-c/three::r5::c4"]
    other = two_runs(tmp_path / "other", sampling_n=2)
    done = subprocess.run(
        [str(BIN), "leaderboard", *map(str, other), "--out", str(tmp_path / "refused")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[:2] == [
        "· reading the runs",
        "error: these runs cannot stand on one leaderboard (their models are compared on one population "
        "and one set of resamples only when the experiment is the same):",
    ]
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not (tmp_path / "refused").exists()
