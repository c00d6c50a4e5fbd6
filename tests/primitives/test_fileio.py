"""``primitives.fileio``: a replaced file is the old one or the new one, never part of either.

Unit checks of the helper (a failure while writing leaves the old file and no temporary file; the
folder is fsynced after the rename; the creation modes), then one check per caller that replaces a
file in place: the caller runs in a subprocess that is SIGKILLed (kill point ``atomic-write``)
after the new bytes are written and fsynced but before the rename, and the old file is intact.
Each caller is also run without the kill, which must change the file, so each case can fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

import pytest

from oracleproto.primitives import fileio
from oracleproto.primitives.fileio import (
    PRIVATE_MODE,
    SHARED_MODE,
    TEMP_SUFFIX,
    atomic_write,
    atomic_write_text,
    atomic_write_with,
)
from oracleproto.primitives.killpoints import ENV_VAR


def test_a_failure_while_writing_leaves_the_old_file_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    target.write_bytes(b"old")

    def fill(handle: BinaryIO) -> None:
        handle.write(b"new, half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        atomic_write_with(target, fill)
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_the_folder_is_fsynced_after_the_rename(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[tuple[Path, bytes]] = []
    target = tmp_path / "sub" / "f.txt"
    real = fileio.fsync_dir

    def spy(folder: Path) -> None:
        synced.append((folder, target.read_bytes()))  # the new bytes are in place by then
        real(folder)

    monkeypatch.setattr(fileio, "fsync_dir", spy)
    atomic_write_text(target, "new")
    assert synced == [(target.parent, b"new")]


def test_before_rename_runs_once_the_bytes_are_written_and_can_stop_the_rename(tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_bytes(b"old")
    seen: list[list[str]] = []

    def stop() -> None:
        seen.append(sorted(p.name for p in tmp_path.iterdir()))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, b"new", before_rename=stop)
    assert len(seen[0]) == 2 and seen[0][1] == "f" and seen[0][0].endswith(TEMP_SUFFIX)
    assert target.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["f"]


def test_modes_private_by_default_shared_under_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "private", b"x")
        atomic_write(tmp_path / "shared", b"x", mode=SHARED_MODE)
        atomic_write(tmp_path / "private-again", b"x", mode=PRIVATE_MODE)
    finally:
        os.umask(old)
    assert (tmp_path / "private").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "shared").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "private-again").stat().st_mode & 0o777 == 0o600


def test_text_is_utf8_and_unencodable_text_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    target = tmp_path / "t"
    atomic_write_text(target, "é\u2028\n")
    assert target.read_bytes() == "é\u2028\n".encode()
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "\ud800")
    assert target.read_bytes() == "é\u2028\n".encode() and len(list(tmp_path.iterdir())) == 1


# Each caller, as a program run with ``sys.argv[1]`` = a scratch folder; it replaces the files
# named in the case (relative to the folder), which the test seeds with old bytes first.
_CLI = "from oracleproto.cli.main import main; import sys; sys.argv[1:] = {args}; main()"
CALLERS: dict[str, tuple[str, dict[str, bytes]]] = {
    "store.manifest (Manifest.write)": (
        "import sys; from pathlib import Path; from oracleproto.store.manifest import Manifest\n"
        "from oracleproto.verify.demo import find_demo_run\n"
        "Manifest.load(find_demo_run() / 'manifest.json').write(Path(sys.argv[1]) / 'manifest.json')",
        {"manifest.json": b"old"},
    ),
    "store.label (write_label)": (
        "import sys; from pathlib import Path; from oracleproto.store.label import make_label, write_label\n"
        "write_label(Path(sys.argv[1]), make_label('new', ()))",
        {"label.json": b'{"name": "old", "tags": []}\n'},
    ),
    "verify.attest (write_attestation)": (
        "import sys; from pathlib import Path; from oracleproto.verify.attest import write_attestation\n"
        "write_attestation(Path(sys.argv[1]))",
        {"attestation.json": b"old", "manifest.json": b"{}"},
    ),
    "view.page (write_page)": (
        "import sys; from pathlib import Path; from oracleproto.view.page import write_page\n"
        "write_page('<p>new</p>', Path(sys.argv[1]) / 'page.html')",
        {"page.html": b"old"},
    ),
    "verify.bundle (write_archive)": (
        "import sys; from pathlib import Path; from oracleproto.verify.bundle import write_archive\n"
        "write_archive(b'new', Path(sys.argv[1]) / 'run.tar.gz')",
        {"run.tar.gz": b"old"},
    ),
    "demo_archive (write_archive)": (
        "import sys; from pathlib import Path; from oracleproto.demo_archive import write_archive\n"
        "root = Path(sys.argv[1]); write_archive(root / 'run', root / 'demo.tar.xz')",
        {"demo.tar.xz": b"old", "run/manifest.json": b"{}"},
    ),
    "settings.init_templates (init --force)": (
        "import os, sys; folder = sys.argv[1]\n" + _CLI.format(args="['init', folder, '--force']"),
        {".env": b"old", "oracleproto.toml": b"old"},
    ),
    "cli.export (export --out)": (
        "import os, sys; out = os.path.join(sys.argv[1], 'rows.csv')\n"
        + _CLI.format(args="['export', 'demo', '--out', out]"),
        {"rows.csv": b"old"},
    ),
}


def _run(program: str, folder: Path, kill: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ENV_VAR}
    if kill:
        env[ENV_VAR] = "atomic-write@KILL"
    return subprocess.run(
        [sys.executable, "-c", program, str(folder)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )


def _seed(folder: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)


@pytest.mark.parametrize("caller", sorted(CALLERS))
def test_a_kill_mid_write_leaves_the_old_file(caller: str, tmp_path: Path) -> None:
    program, files = CALLERS[caller]
    replaced = [n for n, data in files.items() if data == b"old" or n == "label.json"]

    killed_dir = tmp_path / "killed"
    killed_dir.mkdir()
    _seed(killed_dir, files)
    killed = _run(program, killed_dir, kill=True)
    assert killed.returncode == -9, killed.stdout + killed.stderr  # it reached the helper's kill point
    for name in replaced:
        assert (killed_dir / name).read_bytes() == files[name], name
    leftovers = {p.name for p in killed_dir.rglob("*")} - {Path(n).name for n in files} - {"run"}
    assert all(n.startswith(".") and n.endswith(TEMP_SUFFIX) for n in leftovers), leftovers

    done_dir = tmp_path / "done"
    done_dir.mkdir()
    _seed(done_dir, files)
    done = _run(program, done_dir, kill=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert any((done_dir / name).read_bytes() != files[name] for name in replaced)
