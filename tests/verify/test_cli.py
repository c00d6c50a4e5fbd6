"""The command path of ``make replay RUN=demo`` (replay then verify, as subprocesses) and CLI errors."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.verify.bundle import EXPECTED_TABLES
from oracleproto.verify.demo import find_demo_run

BIN = Path(sys.executable).parent / "oracleproto"


def test_make_replay_demo_command_path(tmp_path: Path) -> None:
    replay = subprocess.run(
        [str(BIN), "replay", "demo", "--out", str(tmp_path / "out"), "--no-progress"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "reproduced byte for byte" in replay.stdout
    for name in EXPECTED_TABLES:
        published = find_demo_run() / "analysis" / f"{name}.md"
        assert published.read_text(encoding="utf-8").strip() in replay.stdout
    verify = subprocess.run(
        [str(BIN), "verify", "demo", "--quiet"], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "VERIFIED:" in verify.stdout and " 0 failed" in verify.stdout


def test_verify_cli_fails_with_location_and_exit_1(demo_copy: Path) -> None:
    table = demo_copy / "analysis" / "table4_buckets.md"
    data = table.read_bytes()
    offset = data.index(b"|")
    table.write_bytes(data.replace(b"|", b"!", 1))
    result = CliRunner().invoke(cli, ["verify", str(demo_copy), "--quiet"])
    assert result.exit_code == 1
    assert "FAIL  analysis/table4_buckets.md" in result.output
    line = data[:offset].count(b"\n") + 1
    assert f"byte offset {offset} (line {line}, column 1)" in result.output
    assert "NOT VERIFIED" in result.output


def test_bundle_cli_round_trip_and_bad_input(demo_copy: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "demo.tar.gz"
    result = runner.invoke(cli, ["bundle", "export", str(demo_copy), str(out)])
    assert result.exit_code == 0, result.output
    dest = tmp_path / "imported"
    result = runner.invoke(cli, ["bundle", "import", str(out), str(dest)])
    assert result.exit_code == 0, result.output
    assert f"oracleproto replay {dest / 'run' / demo_copy.name} --dataset" in result.output
    again = runner.invoke(cli, ["bundle", "import", str(out), str(dest)])
    assert again.exit_code == 2
    assert "exists and is not empty" in again.stderr
    shutil.rmtree(dest)
