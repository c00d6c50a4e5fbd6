"""``replay`` on hostile cassettes: refused naming the user's file, nothing left; temp always removed."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from oracleproto.verify.demo import find_demo_run
from tests.hostile import run_main, tree
from tests.transport.test_safe_yaml import billion_laughs
from tests.verify.test_hostile_runs import SEARCH, duplicate_first_entry


@pytest.fixture
def demo_copy(tmp_path: Path) -> Path:
    """A private copy of the committed demo run."""
    run = find_demo_run()
    target = tmp_path / "runs" / run.name
    shutil.copytree(run, target)
    return target


@pytest.fixture
def temp_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where ``tempfile`` puts folders during the test, to prove nothing is left there."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


CASES: list[tuple[str, Callable[[Path], object], str]] = [
    (
        "billion laughs",
        lambda p: p.write_bytes(billion_laughs()),
        "refused: anchor (&name) at line 1, column 5",
    ),
    ("duplicated entry", duplicate_first_entry, "entry #1: duplicate of entry #0"),
]


OUTS = ("none", "new", "empty")


@pytest.mark.parametrize(
    ("case", "out"),
    [(c, o) for c in CASES for o in OUTS],
    ids=[f"{c[0]}, --out {o}" for c in CASES for o in OUTS],
)
def test_a_hostile_cassette_fails_replay_leaving_nothing(  # noqa: PLR0917 - fixtures
    case: tuple[str, Callable[[Path], object], str],
    out: str,
    demo_copy: Path,
    temp_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, damage, message = case
    damage(demo_copy / SEARCH)
    target = {"none": None, "new": tmp_path / "new" / "out", "empty": tmp_path / "empty"}[out]
    if out == "empty":
        assert target is not None
        target.mkdir()
    before = tree(tmp_path)
    args = ["replay", demo_copy, "--no-progress", *(["--out", target] if target is not None else [])]
    code, output = run_main(capsys, monkeypatch, *args)
    assert code == 2, output
    assert f"error: {demo_copy / SEARCH}{',' if 'entry' in message else ':'} " in output, output
    assert message in output
    assert str(temp_root) not in output and "oracleproto-replay-" not in output
    assert tree(tmp_path) == before  # no temp copy, no partial run, --out as it was (or still absent)


def test_replay_without_out_removes_its_temp_folder_after_success(
    temp_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, output = run_main(capsys, monkeypatch, "replay", "demo", "--no-progress")
    assert code == 0, output
    assert "reproduced byte for byte" in output
    assert "replayed run: in a temporary folder, now removed (pass --out DIR to keep it)" in output
    assert list(temp_root.iterdir()) == []


def test_a_cassette_symlinked_out_of_the_run_is_not_followed(
    demo_copy: Path,
    temp_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outside = tmp_path / "outside.yaml"
    (demo_copy / SEARCH).rename(outside)
    (demo_copy / SEARCH).symlink_to(outside)
    before = tree(tmp_path)
    code, output = run_main(capsys, monkeypatch, "replay", demo_copy, "--no-progress")
    assert code == 2, output
    assert f"error: cassette file {demo_copy / SEARCH} leads outside {demo_copy / 'cassettes'}" in output
    assert tree(tmp_path) == before
