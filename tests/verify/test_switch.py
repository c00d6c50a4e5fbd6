"""verify/switch.py in this process: stage, commit, move; what a stop at each step leaves; the plan file.

The kill-point tests (test_gc_kill_points.py) stop a real ``cassettes gc --apply`` in a child
process; these drive the switch directly on a plain folder, so each step's effect is checked
exactly (and a mutated switch is caught by tests that run in this process).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from oracleproto.errors import StoreError
from oracleproto.primitives import killpoints
from oracleproto.store import RunDir
from oracleproto.verify import switch
from oracleproto.verify.demo import find_demo_run
from oracleproto.verify.switch import (
    COMMITTED_DIR,
    STAGING_DIR,
    complete_switch,
    discard_staging,
    finish_interrupted,
    pending_switch,
    switch_files,
)


class StopHereError(Exception):
    """Raised by a patched kill point: the switch stops there, as a failure would stop it."""


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "run"
    (root / "c" / "0").mkdir(parents=True)
    (root / "c" / "0" / "a.yaml").write_bytes(b"old a\n")
    (root / "c" / "0" / "b.yaml").write_bytes(b"old b\n")
    (root / "manifest.json").write_bytes(b"{old}\n")
    return root


def _stop_at(
    monkeypatch: pytest.MonkeyPatch, phase: str, n: int = 1, action: Callable[[], None] | None = None
) -> list[str]:
    """Patch the kill points: record each phase reached, run ``action`` (default: raise StopHereError) at
    the ``n``-th time ``phase`` is reached."""
    seen: list[str] = []

    def reached(name: str) -> None:
        seen.append(name)
        if name == phase and seen.count(name) == n:
            (action or _raise)()

    monkeypatch.setattr(killpoints, "reached", reached)
    return seen


def _raise() -> None:
    raise StopHereError


def test_a_switch_replaces_deletes_and_leaves_no_folder(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _stop_at(monkeypatch, "never")
    switch_files(
        folder,
        "cassettes gc --apply",
        {"manifest.json": b"{new}\n", "c/0/a.yaml": b"new a\n", "c/1/new.yaml": b"made\n"},
        ["c/0/b.yaml"],
    )
    assert _tree(folder) == {"c/0/a.yaml": b"new a\n", "c/1/new.yaml": b"made\n", "manifest.json": b"{new}\n"}
    assert not (folder / STAGING_DIR).exists() and not (folder / COMMITTED_DIR).exists()
    # Each file staged, then the commit, each file moved (sorted order), then the end.
    assert seen == ["switch-stage"] * 3 + ["switch-commit"] + ["switch-move"] * 3 + ["switch-moved"]


def test_a_stop_while_staging_leaves_the_old_files_and_no_staging(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _tree(folder)
    _stop_at(monkeypatch, "switch-stage", n=2)
    with pytest.raises(StopHereError):
        switch_files(folder, "op", {"c/0/a.yaml": b"new a\n", "manifest.json": b"{new}\n"}, ["c/0/b.yaml"])
    assert _tree(folder) == before
    assert not (folder / STAGING_DIR).exists() and pending_switch(folder) is None


def test_the_staged_plan_names_the_operation_and_both_lists_sorted(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    staged: dict[str, bytes] = {}

    def capture() -> None:
        staged.update(_tree(folder / STAGING_DIR))
        raise StopHereError

    _stop_at(monkeypatch, "switch-commit", action=capture)
    with pytest.raises(StopHereError):
        switch_files(folder, "gc", {"manifest.json": b"{new}\n", "c/0/a.yaml": b"A\n"}, ["z", "c/0/b.yaml"])
    assert staged == {
        "files/c/0/a.yaml": b"A\n",
        "files/manifest.json": b"{new}\n",
        "plan.json": b'{\n "delete": [\n  "c/0/b.yaml",\n  "z"\n ],\n "operation": "gc",\n'
        b' "replace": [\n  "c/0/a.yaml",\n  "manifest.json"\n ]\n}\n',
    }
    assert not (folder / STAGING_DIR).exists()  # not committed: nothing staged may stay


def test_a_stop_mid_move_is_finished_by_complete_switch_moving_only_what_is_still_staged(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stop_at(monkeypatch, "switch-move", n=2)
    with pytest.raises(StopHereError):
        switch_files(folder, "gc", {"c/0/a.yaml": b"new a\n", "manifest.json": b"{new}\n"}, ["c/0/b.yaml"])
    # Committed: the first file moved, the second still staged, the deletion not done yet.
    assert pending_switch(folder) == "gc"
    assert (folder / "c/0/a.yaml").read_bytes() == b"new a\n"
    assert (folder / "manifest.json").read_bytes() == b"{old}\n"
    assert (folder / "c/0/b.yaml").exists()
    # What was moved is gone from the staging area, so a rerun cannot move it twice.
    assert _tree(folder / COMMITTED_DIR / "files") == {"manifest.json": b"{new}\n"}

    seen = _stop_at(monkeypatch, "never")
    assert complete_switch(folder) == "gc"
    assert seen == ["switch-move", "switch-moved"]
    assert _tree(folder) == {"c/0/a.yaml": b"new a\n", "manifest.json": b"{new}\n"}
    assert pending_switch(folder) is None and complete_switch(folder) is None


def test_a_stop_after_every_move_leaves_only_the_folder_to_remove(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stop_at(monkeypatch, "switch-moved")
    with pytest.raises(StopHereError):
        switch_files(folder, "gc", {"c/0/a.yaml": b"new a\n"}, ["c/0/b.yaml", "c/0/gone-already.yaml"])
    assert pending_switch(folder) == "gc"
    assert not (folder / "c/0/b.yaml").exists()
    seen = _stop_at(monkeypatch, "never")
    assert complete_switch(folder) == "gc"  # the deletions again (missing files are fine), no move
    assert seen == ["switch-moved"]
    assert _tree(folder) == {"c/0/a.yaml": b"new a\n", "manifest.json": b"{old}\n"}


@pytest.mark.parametrize(
    "plan",
    [
        b"not json",
        b'{"operation": "gc", "replace": []}',
        b'{"operation": 3, "replace": [], "delete": []}',
        b'{"operation": "gc", "replace": "x", "delete": []}',
        b'{"operation": "gc", "replace": [], "delete": {}}',
    ],
)
def test_a_damaged_plan_is_named_and_nothing_moves(folder: Path, plan: bytes) -> None:
    (folder / COMMITTED_DIR / "files").mkdir(parents=True)
    (folder / COMMITTED_DIR / "files" / "manifest.json").write_bytes(b"{new}\n")
    (folder / COMMITTED_DIR / "plan.json").write_bytes(plan)
    message = (
        r"plan\.json: the plan of an interrupted maintenance switch is unreadable \(.+\); it was "
        r"written before its commit, so this is damage: restore the run from a copy$"
    )
    for call in (pending_switch, complete_switch):
        with pytest.raises(StoreError, match=message):
            call(folder)
    assert (folder / "manifest.json").read_bytes() == b"{old}\n"


def test_no_switch_is_no_operation(folder: Path) -> None:
    (folder / COMMITTED_DIR).mkdir()  # a folder without a plan is not a committed switch
    assert pending_switch(folder) is None
    shutil.rmtree(folder / COMMITTED_DIR)
    assert complete_switch(folder) is None


def test_a_path_out_of_the_run_is_refused_before_anything_is_staged(folder: Path) -> None:
    before = _tree(folder)
    with pytest.raises(StoreError, match=r"^switch '\.\./outside\.yaml' escapes its folder \(absolute path"):
        switch_files(folder, "gc", {"../outside.yaml": b"x"}, [])
    assert _tree(folder) == before and not (folder.parent / "outside.yaml").exists()
    assert not (folder / STAGING_DIR).exists()


def test_discard_staging_removes_only_the_uncommitted_folder(folder: Path) -> None:
    discard_staging(folder)  # nothing there: no error
    (folder / STAGING_DIR / "files").mkdir(parents=True)
    (folder / COMMITTED_DIR).mkdir()
    discard_staging(folder)
    assert not (folder / STAGING_DIR).exists() and (folder / COMMITTED_DIR).is_dir()


def test_a_ctrl_c_during_the_moves_is_held_until_the_switch_is_done(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler = signal.getsignal(signal.SIGINT)
    _stop_at(monkeypatch, "switch-move", action=lambda: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(KeyboardInterrupt):
        switch_files(folder, "gc", {"c/0/a.yaml": b"A\n", "manifest.json": b"M\n"}, ["c/0/b.yaml"])
    assert _tree(folder) == {"c/0/a.yaml": b"A\n", "manifest.json": b"M\n"}  # completed first
    assert pending_switch(folder) is None
    assert signal.getsignal(signal.SIGINT) is handler


def test_without_a_ctrl_c_the_moves_raise_nothing_and_restore_the_handler(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    handler = signal.getsignal(signal.SIGINT)
    _stop_at(monkeypatch, "never")
    switch_files(folder, "gc", {"manifest.json": b"M\n"}, [])
    assert signal.getsignal(signal.SIGINT) is handler


def test_off_the_main_thread_the_switch_runs_without_touching_signal_handlers(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stop_at(monkeypatch, "never")
    handlers: list[object] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            handlers.append(signal.getsignal(signal.SIGINT))
            switch_files(folder, "gc", {"manifest.json": b"M\n"}, [])
            handlers.append(signal.getsignal(signal.SIGINT))
        except BaseException as exc:  # signal.signal off the main thread raises ValueError
            errors.append(exc)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors == [] and handlers[0] is handlers[1]
    assert (folder / "manifest.json").read_bytes() == b"M\n"


@pytest.fixture
def demo_copy(tmp_path: Path) -> RunDir:
    source = find_demo_run()
    target = tmp_path / "runs" / source.name
    shutil.copytree(source, target)
    return RunDir.open(target)


def test_finish_interrupted_creates_nothing_in_a_run_without_a_switch(demo_copy: RunDir) -> None:
    before = sorted(p.name for p in demo_copy.root.iterdir())
    assert finish_interrupted(demo_copy) is None
    assert sorted(p.name for p in demo_copy.root.iterdir()) == before  # no lock file either


def test_finish_interrupted_drops_staging_and_completes_a_committed_switch(
    demo_copy: RunDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = demo_copy.root
    (root / STAGING_DIR / "files").mkdir(parents=True)
    assert finish_interrupted(demo_copy) is None
    assert not (root / STAGING_DIR).exists()

    _stop_at(monkeypatch, "switch-move")
    with pytest.raises(StopHereError):
        switch_files(root, "cassettes gc --apply", {"note.txt": b"new\n"}, [])
    _stop_at(monkeypatch, "never")
    assert finish_interrupted(demo_copy) == "cassettes gc --apply"
    assert (root / "note.txt").read_bytes() == b"new\n" and not (root / COMMITTED_DIR).exists()


def test_the_plan_is_json_a_reader_can_load(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stop_at(monkeypatch, "switch-moved")
    with pytest.raises(StopHereError):
        switch_files(folder, "op", {"manifest.json": b"M\n"}, ["c/0/b.yaml"])
    plan = json.loads((folder / COMMITTED_DIR / "plan.json").read_text())
    assert plan == {"operation": "op", "replace": ["manifest.json"], "delete": ["c/0/b.yaml"]}


def test_a_plan_of_the_wrong_types_says_so(folder: Path) -> None:
    (folder / COMMITTED_DIR).mkdir()
    (folder / COMMITTED_DIR / "plan.json").write_bytes(b'{"operation": "gc", "replace": [], "delete": "x"}')
    with pytest.raises(StoreError, match=r"unreadable \(unexpected types\); it was written"):
        complete_switch(folder)


def _committed(folder: Path, replace: dict[str, bytes], delete: list[str]) -> None:
    """A committed switch as a killed command leaves it (the plan written as switch_files writes it)."""
    (folder / COMMITTED_DIR / "files").mkdir(parents=True, exist_ok=True)
    for rel, data in replace.items():
        staged = folder / COMMITTED_DIR / "files" / rel
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.write_bytes(data)
    plan = {"operation": "gc", "replace": sorted(replace), "delete": sorted(delete)}
    (folder / COMMITTED_DIR / "plan.json").write_text(json.dumps(plan), encoding="utf-8")


@pytest.mark.parametrize(
    ("replace", "delete"),
    [({"../evil.yaml": b"x"}, []), ({}, ["../evil.yaml"]), ({}, ["/etc/evil.yaml"])],
    ids=["replace", "delete", "delete-absolute"],
)
def test_a_crafted_plan_cannot_reach_out_of_the_run(
    folder: Path, replace: dict[str, bytes], delete: list[str]
) -> None:
    (folder.parent / "evil.yaml").write_bytes(b"keep\n")
    _committed(folder, replace, delete)
    name = next(iter(replace), None) or delete[0]
    with pytest.raises(StoreError, match=rf"^switch {re.escape(repr(name))} escapes its folder"):
        complete_switch(folder)
    assert (folder.parent / "evil.yaml").read_bytes() == b"keep\n"


def test_a_plan_cannot_move_a_file_through_a_symlink_out_of_the_run(folder: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (folder / "link").symlink_to(outside)
    _committed(folder, {"link/x.yaml": b"x"}, [])
    with pytest.raises(StoreError, match=r"^switch .*link/x\.yaml leads outside .*refusing to follow it"):
        complete_switch(folder)
    assert list(outside.iterdir()) == []


def test_a_new_file_in_new_nested_folders_is_moved_in(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stop_at(monkeypatch, "never")
    switch_files(folder, "gc", {"d/e/new.yaml": b"new\n"}, [])
    assert (folder / "d" / "e" / "new.yaml").read_bytes() == b"new\n"


def test_each_new_folder_is_synced_in_its_parent(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _stop_at(monkeypatch, "never")
    synced: list[Path] = []
    monkeypatch.setattr(switch, "fsync_dir", synced.append)
    switch_files(folder, "gc", {"d/e/new.yaml": b"new\n", "c/0/a.yaml": b"A\n"}, [])
    moves = synced[synced.index(folder) + 1 :]  # after the commit's own sync of the run folder
    assert moves == [folder / "c" / "0", folder / "d" / "e", folder / "d", folder, folder]
