"""``--out``: the board's folder appears whole or not at all, and a folder of other files is not touched."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from oracleproto.errors import AnalysisError
from oracleproto.leaderboard.publish import MARKER, publish

FILES = {"leaderboard.html": "<!DOCTYPE html>", "leaderboard.csv": "rank\n", "oracleproto-view-x.html": "v"}


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_a_new_folder_with_its_parents(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "board"
    written = publish(FILES, out)
    assert written == [out / name for name in FILES]
    assert _tree(out) == sorted([MARKER, *FILES])
    assert (out / "leaderboard.csv").read_text(encoding="utf-8") == "rank\n"
    assert _tree(tmp_path) == ["a", "a/b", "a/b/board", *(f"a/b/board/{n}" for n in sorted([MARKER, *FILES]))]


def test_an_empty_folder_is_filled(tmp_path: Path) -> None:
    out = tmp_path / "board"
    out.mkdir()
    publish(FILES, out)
    assert _tree(out) == sorted([MARKER, *FILES])


def test_an_earlier_board_is_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "board"
    publish({**FILES, "oracleproto-view-old.html": "a run no longer on the board"}, out)
    publish({"leaderboard.html": "new"}, out)
    assert _tree(out) == sorted([MARKER, "leaderboard.html"])  # the old viewer page went with it
    assert (out / "leaderboard.html").read_text(encoding="utf-8") == "new"
    assert _tree(tmp_path) == ["board", *(f"board/{n}" for n in sorted([MARKER, "leaderboard.html"]))]


def test_a_folder_of_other_files_is_refused_and_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("keep me", encoding="utf-8")
    with pytest.raises(AnalysisError) as caught:
        publish(FILES, out)
    assert str(caught.value) == (
        f"--out {out} is a folder that holds other files and no earlier leaderboard (no {MARKER} in it): "
        "choose a new or empty folder, or an earlier board's to replace it"
    )
    assert _tree(tmp_path) == ["mine", "mine/thesis.tex"]


def test_a_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "board.html"
    out.write_text("x", encoding="utf-8")
    with pytest.raises(AnalysisError, match=r"is a file: give a folder for the page, the CSV"):
        publish(FILES, out)
    assert out.read_text(encoding="utf-8") == "x"


def test_a_parent_that_is_a_file_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("x", encoding="utf-8")
    with pytest.raises(AnalysisError) as caught:
        publish(FILES, tmp_path / "notes" / "sub" / "board")
    assert str(caught.value).startswith(f"cannot write {tmp_path / 'notes' / 'sub' / 'board'}: ")
    assert "is a file, not a directory" in str(caught.value)
    assert _tree(tmp_path) == ["notes"]


def test_a_failure_mid_write_leaves_the_earlier_board_or_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = Path.write_text

    def full_disk(self: Path, text: str, *args: object, **kwargs: object) -> int:
        if self.name == "oracleproto-view-x.html":  # the last file: the others are written already
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, text, *args, **kwargs)  # type: ignore[arg-type]

    earlier = tmp_path / "earlier"
    publish({"leaderboard.html": "earlier"}, earlier)
    monkeypatch.setattr(Path, "write_text", full_disk)
    for out in (tmp_path / "new" / "board", earlier):
        with pytest.raises(AnalysisError) as caught:
            publish(FILES, out)
        assert str(caught.value).startswith(f"cannot write {out}: ")
        assert "ENOSPC" in str(caught.value)
    monkeypatch.undo()
    # No temporary folder, no created parent; the earlier board as it was.
    assert _tree(tmp_path) == ["earlier", f"earlier/{MARKER}", "earlier/leaderboard.html"]
    assert (earlier / "leaderboard.html").read_text(encoding="utf-8") == "earlier"


def test_what_a_killed_writer_left_beside_out_is_cleared(tmp_path: Path) -> None:
    stale = tmp_path / ".board.tmp-0123456789ab"
    stale.mkdir()
    (stale / "leaderboard.html").write_text("half", encoding="utf-8")
    publish(FILES, tmp_path / "board")
    assert not stale.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["board"]


def test_the_folder_gets_the_users_umask(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        publish(FILES, tmp_path / "board")
    finally:
        os.umask(old)
    assert (tmp_path / "board").stat().st_mode & 0o777 == 0o750
    assert (tmp_path / "board" / "leaderboard.html").stat().st_mode & 0o777 == 0o640
