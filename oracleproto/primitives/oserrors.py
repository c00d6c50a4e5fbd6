"""File-system errors in words: the path, what the errno means, and how to fix it (pure)."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

_ERRNO_FIX = {
    errno.EACCES: ("permission denied", "check its permissions and owner (or pick another path)"),
    errno.EPERM: ("operation not permitted", "check its permissions and owner (or pick another path)"),
    errno.EROFS: ("read-only file system", "write to a writable location instead"),
    errno.ENOSPC: ("no space left on the device", "free some space or write elsewhere, then rerun"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or write elsewhere, then rerun"),
    errno.EFBIG: (
        "file too large (the file-size limit, `ulimit -f`, was reached)",
        "raise the limit (`ulimit -f unlimited`) or write elsewhere, then rerun",
    ),
    errno.ENOENT: ("no such file or directory", "check the path"),
    errno.ENOTDIR: ("a part of the path is not a directory", "check the path"),
    errno.EISDIR: ("is a directory where a file was expected", "pass a file"),
    errno.EEXIST: ("already exists", "remove it or pick another path"),
    errno.ENOTEMPTY: ("directory not empty", "remove it or pick another path"),
    errno.ENAMETOOLONG: ("file name too long", "use a shorter path"),
    errno.ELOOP: ("too many levels of symbolic links", "check the symbolic links of the path"),
    errno.EMFILE: ("too many open files", "raise the limit (`ulimit -n`) and rerun"),
    errno.EIO: ("input/output error", "check the disk (dmesg) and rerun"),
}


def errno_meaning(code: int | None) -> str:
    """``meaning (ENAME)`` for an errno value."""
    meaning, _ = _ERRNO_FIX.get(code or 0, ("", ""))
    if not meaning:
        meaning = os.strerror(code) if code else "unknown error"
    name = errno.errorcode.get(code or 0, "")
    return f"{meaning} ({name})" if name else meaning


def errno_fix(code: int | None) -> str:
    """How to fix a failure with this errno."""
    return _ERRNO_FIX.get(code or 0, ("", "check the path and rerun"))[1]


def file_in_the_way(target: object) -> Path | None:
    """The first parent of ``target`` that exists as a non-directory (why a mkdir failed), if any."""
    path = Path(str(target))
    for parent in reversed(path.parents):
        if parent.exists() and not parent.is_dir():
            return parent
    return None


def cannot_write(target: object, exc: OSError) -> str:
    """``cannot write TARGET: meaning (ENAME); how to fix`` (the target, not the temp file that failed)."""
    if isinstance(exc, shutil.Error):
        return f"cannot write {target}: {describe_copy_error(exc)}"
    blocker = file_in_the_way(target) if exc.errno in (errno.EEXIST, errno.ENOTDIR) else None
    if blocker is not None:
        return f"cannot write {target}: {blocker} is a file, not a directory; remove it or pick another path"
    return f"cannot write {target}: {errno_meaning(exc.errno)}; {errno_fix(exc.errno)}"


def describe_copy_error(exc: shutil.Error) -> str:
    """A ``shutil.copytree`` failure: how many files failed and the first one's reason."""
    failures = exc.args[0] if exc.args and isinstance(exc.args[0], list) else []
    if not failures:
        return str(exc)
    _, dst, why = failures[0]
    return (
        f"copying {len(failures)} file(s) failed, the first {dst}: {why}; "
        "free some space or check permissions"
    )


def describe_os_error(exc: OSError, path: object = None) -> str:
    """``PATH: meaning (ENAME); how to fix`` (``path`` when the error does not carry one)."""
    if isinstance(exc, shutil.Error):
        return describe_copy_error(exc)
    where = exc.filename if exc.filename is not None else path
    blocker = file_in_the_way(where) if exc.errno in (errno.EEXIST, errno.ENOTDIR) and where else None
    if blocker is not None:
        return f"{where}: {blocker} is a file, not a directory; remove it or pick another path"
    second = f" → {exc.filename2}" if exc.filename2 is not None else ""
    head = f"{where}{second}: " if where is not None else ""
    return f"{head}{errno_meaning(exc.errno)}; {errno_fix(exc.errno)}"
