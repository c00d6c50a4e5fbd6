"""``bundle export`` writes a publishable archive: its mode follows the user's umask, not 0o600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from oracleproto.verify import bundle
from oracleproto.verify.bundle import BundleError, export_bundle, write_archive
from oracleproto.verify.findings import VerifyReport


@contextmanager
def umask(value: int) -> Iterator[None]:
    """The process umask set to ``value`` for the block (tests run one at a time in a process)."""
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize(
    ("mask", "expected"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)]
)
def test_the_archive_gets_the_mode_the_umask_gives(tmp_path: Path, mask: int, expected: int) -> None:
    with umask(mask):
        out = write_archive(b"archive bytes", tmp_path / "run.tar.gz")
    assert mode(out) == expected
    assert out.read_bytes() == b"archive bytes"
    assert [p.name for p in tmp_path.iterdir()] == ["run.tar.gz"]  # no temporary file left


def test_replacing_an_archive_takes_the_umask_too(tmp_path: Path) -> None:
    out = tmp_path / "run.tar.gz"
    out.write_bytes(b"old")
    out.chmod(0o600)
    with umask(0o022):
        write_archive(b"new", out)
    assert mode(out) == 0o644 and out.read_bytes() == b"new"


def test_an_unwritable_place_is_one_message_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where a folder should be", encoding="utf-8")
    with pytest.raises(BundleError, match=r"cannot write .*taken is a file, not a directory"):
        write_archive(b"x", tmp_path / "taken" / "run.tar.gz")
    (tmp_path / "dir.tar.gz").mkdir()
    with pytest.raises(BundleError, match="cannot write"):
        write_archive(b"x", tmp_path / "dir.tar.gz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.tar.gz", "taken"]  # no temporary file


def test_bundle_export_writes_with_the_umask(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The verify pass before publishing is tested with the bundle itself; here only the file matters.
    monkeypatch.setattr(bundle, "verify_run", lambda root, **_: VerifyReport(root))
    with umask(0o027):
        out = export_bundle(demo_run, tmp_path / "demo.tar.gz")
    assert mode(out) == 0o640
