"""Atomic file replacement: readers, and a machine that loses power, see the old file or the new one.

The one way files are replaced in place: the bytes go to a temporary sibling
(``.<name>.<random>.tmp``, so a crash leaves nothing under the real name), the temporary file is
fsynced, renamed over the target, and the folder is fsynced so that the rename itself survives a
power cut (a rename lives in the folder's entries, which the file's fsync does not cover).

``mode`` is the temporary file's creation mode, before the umask: :data:`PRIVATE_MODE` (0o600, the
default: run data, settings files with keys) or :data:`SHARED_MODE` (0o666, for files meant to be
handed on — pages, archives — which then get the permissions any file the user makes gets).
"""

from __future__ import annotations

import errno
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

from oracleproto.primitives import killpoints

#: Suffix of the temporary copy renamed into place (``.<name>.<random>.tmp``).
TEMP_SUFFIX = ".tmp"
PRIVATE_MODE = 0o600
SHARED_MODE = 0o666

T = TypeVar("T")

#: What a folder's fsync may answer on file systems that cannot sync a folder (nothing to do there).
_NO_FOLDER_SYNC = {errno.EINVAL, errno.ENOTSUP, errno.EBADF, errno.EISDIR}


def fsync_dir(folder: Path) -> None:
    """Make the entries of ``folder`` (a rename, a new file) durable."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _NO_FOLDER_SYNC:
            raise
    finally:
        os.close(fd)


def temp_sibling(path: Path) -> Path:
    """A fresh temporary name beside ``path`` that no reader takes for it."""
    return path.with_name(f".{path.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")


def atomic_write_with(
    path: Path,
    fill: Callable[[BinaryIO], T],
    *,
    mode: int = PRIVATE_MODE,
    before_rename: Callable[[], None] | None = None,
) -> T:
    """Replace ``path`` with what ``fill`` writes to the temporary file; returns what ``fill`` returns.

    The text can be written piece by piece, never held whole (a cassette file is tens of MB). On
    any failure the temporary file is removed and ``path`` is as it was.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_sibling(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), mode)
    try:
        with os.fdopen(fd, "wb") as handle:
            result = fill(handle)
            handle.flush()
            os.fsync(handle.fileno())
        if before_rename is not None:
            before_rename()
        killpoints.reached("atomic-write")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return result


def atomic_write(
    path: Path, data: bytes, *, mode: int = PRIVATE_MODE, before_rename: Callable[[], None] | None = None
) -> None:
    """Replace ``path`` with ``data`` (see :func:`atomic_write_with`)."""
    atomic_write_with(path, lambda handle: handle.write(data), mode=mode, before_rename=before_rename)


def atomic_write_text(path: Path, text: str, *, mode: int = PRIVATE_MODE) -> None:
    """Replace ``path`` with ``text`` as UTF-8, newlines as given (see :func:`atomic_write_with`)."""
    atomic_write(path, text.encode("utf-8"), mode=mode)
