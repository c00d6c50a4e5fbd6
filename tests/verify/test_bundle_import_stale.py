"""``bundle import`` killed mid-way: the rerun removes the dead import's temp folder and completes.

The kill is real (SIGKILL in a subprocess at kill point ``bundle-member``: the first member is
copied into the temp folder). A live import's folder (its lock held) is never touched.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracleproto.primitives.killpoints import ENV_VAR
from oracleproto.primitives.oslock import lock_exclusive
from oracleproto.verify.bundle_import import remove_stale_imports
from tests.hostile import run_main
from tests.verify.test_hostile_bundles import DB, GOOD, GOOD_MEMBERS, bundle_of

ENTRY = "from oracleproto.cli.main import main; main()"


def _names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_killed_import_is_cleaned_by_the_rerun(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = bundle_of(*GOOD_MEMBERS)(tmp_path / "good.tar.gz")
    dest = tmp_path / "out" / "dest"
    env = {**os.environ, ENV_VAR: "bundle-member:1@KILL"}
    killed = subprocess.run(
        [sys.executable, "-c", ENTRY, "bundle", "import", str(bundle), str(dest)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert killed.returncode == -9, killed.stderr
    (stale,) = _names(dest.parent)  # the dead import's folder, and no DEST
    assert stale.startswith(".dest.import-")

    code, output = run_main(capsys, monkeypatch, "bundle", "import", bundle, dest)

    assert code == 0, output
    assert _names(dest.parent) == ["dest"]
    assert (dest / DB).read_bytes() == GOOD[DB]
    assert ".importing" not in {p.name for p in dest.rglob("*")}


def test_a_live_imports_folder_is_left_alone(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    live, dead, empty = (tmp_path / f".dest.import-{n}" for n in ("live", "dead", "empty"))
    for folder in (live, dead, empty):
        folder.mkdir()
    (dead / ".importing").touch()
    (dead / "bundle.json").write_text("{}", encoding="utf-8")
    (tmp_path / ".other.import-x").mkdir()  # another DEST's import
    with open(live / ".importing", "wb") as held:
        lock_exclusive(held.fileno(), blocking=False)
        removed = remove_stale_imports(dest)
    assert removed == [dead, empty]
    assert _names(tmp_path) == [".dest.import-live", ".other.import-x"]


def test_a_dead_imports_folder_that_cannot_be_removed_does_not_stop_the_next_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "dest"
    dead = tmp_path / ".dest.import-dead"
    (dead / "run").mkdir(parents=True)
    (dead / ".importing").touch()
    real_rmdir = os.rmdir

    def refuse(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    # What a folder another user made read-only does to a removal: the cleanup is best effort.
    monkeypatch.setattr(os, "rmdir", refuse)
    assert remove_stale_imports(dest) == [dead]
    monkeypatch.setattr(os, "rmdir", real_rmdir)
    assert dead.is_dir() and not (dead / ".importing").exists()  # the files went, the folders stayed


def test_stale_folders_beside_a_dest_whose_parent_is_missing_are_none(tmp_path: Path) -> None:
    assert remove_stale_imports(tmp_path / "missing" / "dest") == []
    (tmp_path / ".dest.import-file").write_text("not a folder", encoding="utf-8")
    (tmp_path / ".dest.import-link").symlink_to(tmp_path)
    assert remove_stale_imports(tmp_path / "dest") == []
    assert _names(tmp_path) == [".dest.import-file", ".dest.import-link"]
