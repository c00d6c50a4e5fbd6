"""The demo run as package data: one deterministic ``.tar.xz`` built into the wheel, extracted on use.

A clone has the demo run under ``cassettes/demo/`` (6.7 MB of YAML, SQLite and analysis files);
an installed wheel has no repository around it. The wheel build (``setup.py``) packs that folder
into ``oracleproto/data/demo-run.tar.xz`` (about 0.5 MB: xz shares the repeated prompts across
files, where the wheel's per-file zip compression would need 0.73 MB and the installed folder
6.7 MB). ``oracleproto replay|verify demo`` extract it once into the user's cache folder;
``oracleproto demo fetch`` extracts it into the working folder, where a clone has it.

Standard library only: ``setup.py`` loads this file by path while building, before any of the
package's dependencies exist. The archive is deterministic (sorted members, zero mtimes and
owners, fixed modes), so two builds of one commit hold identical bytes, and extraction refuses
anything but plain files and folders under the run id.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import os
import shutil
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from oracleproto.primitives.fileio import SHARED_MODE, atomic_write

ARCHIVE_NAME = "demo-run.tar.xz"
#: Where the archive sits inside the installed package.
ARCHIVE_PACKAGE_PATH = PurePosixPath("data") / ARCHIVE_NAME
_XZ_PRESET = 9


class DemoArchiveError(Exception):
    """The packaged demo archive is damaged or holds something other than one run folder."""


def write_archive(run_dir: Path, target: Path) -> Path:
    """Pack ``run_dir`` (its name becomes the top folder) into a deterministic ``target`` .tar.xz."""
    members = sorted(p for p in run_dir.rglob("*") if p.name != "__pycache__")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.addfile(_info(run_dir.name, directory=True))
        for path in members:
            name = f"{run_dir.name}/{path.relative_to(run_dir).as_posix()}"
            if path.is_symlink():
                raise DemoArchiveError(f"{path}: a symlink in the demo run; only plain files are packed")
            if path.is_dir():
                tar.addfile(_info(name, directory=True))
            else:
                data = path.read_bytes()
                tar.addfile(_info(name, size=len(data)), io.BytesIO(data))
    atomic_write(target, lzma.compress(buffer.getvalue(), preset=_XZ_PRESET), mode=SHARED_MODE)
    return target


def _info(name: str, *, directory: bool = False, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE if directory else tarfile.REGTYPE
    info.mode = 0o755 if directory else 0o644
    info.size = size
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def packaged_archive() -> Path | None:
    """The archive shipped inside the installed package, ``None`` in a source checkout."""
    path = Path(__file__).resolve().parent.joinpath(*ARCHIVE_PACKAGE_PATH.parts)
    return path if path.is_file() else None


def archive_digest(archive: Path) -> str:
    """sha256 of the archive (names its cache folder, so a new release extracts afresh)."""
    return hashlib.sha256(archive.read_bytes()).hexdigest()


def extract_archive(archive: Path, parent: Path) -> Path:
    """Extract the archive's run folder into ``parent``; returns ``parent/<run id>``.

    Extracted into a temporary sibling, then renamed into place: a killed extraction never
    leaves a half run behind. An existing ``parent/<run id>`` is kept as it is.
    """
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".demo-extract-", dir=parent))
    try:
        run_id = _extract_members(archive, staging)
        target = parent / run_id
        if not target.exists():
            try:
                os.rename(staging / run_id, target)
            except OSError:
                if not (target / "manifest.json").is_file():  # not a concurrent extraction
                    raise
        return target
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _extract_members(archive: Path, dest: Path) -> str:
    """Write every member under ``dest``; refuses links, devices and paths leaving the run folder."""
    try:
        tar = tarfile.open(archive, mode="r:xz")  # noqa: SIM115 - closed by the `with` below
    except (OSError, tarfile.TarError) as exc:
        raise DemoArchiveError(f"{archive}: not a readable .tar.xz ({exc}); reinstall oracleproto") from None
    run_ids: set[str] = set()
    with tar:
        for member in tar.getmembers():
            parts = PurePosixPath(member.name).parts
            if not parts or ".." in parts or member.name.startswith("/") or "\\" in member.name:
                raise DemoArchiveError(f"{archive}: member {member.name!r} leaves the run folder")
            run_ids.add(parts[0])
            target = dest.joinpath(*parts)
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
            elif member.isfile():
                source = tar.extractfile(member)
                if source is None:
                    raise DemoArchiveError(f"{archive}: member {member.name!r} has no data")
                target.parent.mkdir(parents=True, exist_ok=True)
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
            else:
                raise DemoArchiveError(f"{archive}: member {member.name!r} is not a plain file or folder")
    if len(run_ids) != 1:
        raise DemoArchiveError(f"{archive}: expected one run folder, found {sorted(run_ids)}")
    return run_ids.pop()
