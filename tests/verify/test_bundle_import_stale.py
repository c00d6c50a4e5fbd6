"""``bundle import`` killed mid-way: the rerun removes the dead import's temp folder and completes.

The kill is real (SIGKILL in a subprocess at kill point ``bundle-member``: the first member is
copied into the temp folder). A live import's folder (its lock held) is never touched.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from oracleproto.primitives.killpoints import ENV_VAR
from oracleproto.primitives.oslock import lock_exclusive
from oracleproto.verify.bundle_import import import_bundle, remove_stale_imports
from oracleproto.verify.bundle_schema import BundleError, parse_bundle_manifest
from tests.hostile import run_main
from tests.verify.test_hostile_bundles import DB, GOOD, GOOD_MEMBERS, RUN_ID, bundle_of, manifest_bytes

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


def test_every_folder_beside_dest_is_looked_at_whatever_comes_before_it(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    names = {
        "a-file": None,  # not a folder
        "b-link": "link",  # a symlink to a folder holding a lock file: not ours to remove
        "c-full": "full",  # no lock file, not empty: an import that is starting
        "d-empty": "empty",  # no lock file, empty: its importer died at once
        "e-live": "live",
        "f-dead": "dead",
    }
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / ".importing").touch()
    for name, kind in names.items():
        folder = tmp_path / f".dest.import-{name}"
        if kind is None:
            folder.write_text("x", encoding="utf-8")
        elif kind == "link":
            folder.symlink_to(target)
        else:
            folder.mkdir()
            if kind == "full":
                (folder / "bundle.json").write_text("{}", encoding="utf-8")
            if kind in ("live", "dead"):
                (folder / ".importing").touch()
    with open(tmp_path / ".dest.import-e-live" / ".importing", "rb") as held:
        lock_exclusive(held.fileno(), blocking=False)
        removed = remove_stale_imports(dest)
    assert removed == [tmp_path / ".dest.import-d-empty", tmp_path / ".dest.import-f-dead"]
    assert _names(tmp_path) == [
        ".dest.import-a-file",
        ".dest.import-b-link",
        ".dest.import-c-full",
        ".dest.import-e-live",
        "elsewhere",
    ]
    assert (target / ".importing").exists()


def test_a_failing_import_reports_its_own_error_when_the_cleanup_fails_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = bundle_of()(tmp_path / "no-members.tar.gz")  # bundle.json lists members that are missing

    def refuse(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "rmdir", refuse)
    with pytest.raises(BundleError, match=r"is listed in bundle\.json but missing"):
        import_bundle(bundle, tmp_path / "new" / "dest")


def test_the_imported_bundle_json_is_the_checked_body_sorted_and_indented(tmp_path: Path) -> None:
    bundle = bundle_of(*GOOD_MEMBERS)(tmp_path / "good.tar.gz")
    imported = import_bundle(bundle, tmp_path / "dest")
    body = {k: v for k, v in json.loads(manifest_bytes(GOOD)).items() if k != "self_digest"}
    assert imported.manifest == body
    text = (tmp_path / "dest" / "bundle.json").read_text(encoding="utf-8")
    assert text == json.dumps(body, sort_keys=True, indent=1) + "\n"
    assert text.startswith('{\n "dataset": {\n  "member": null,')


def test_a_manifest_without_the_runs_manifest_is_not_a_bundle_of_that_run() -> None:
    raw = manifest_bytes({DB: GOOD[DB]})
    message = (
        rf"^w: bundle\.json: the bundle lists no run/{RUN_ID}/manifest\.json; not a bundle of run {RUN_ID}$"
    )
    with pytest.raises(BundleError, match=message):
        parse_bundle_manifest(raw, "w")
