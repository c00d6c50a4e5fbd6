"""Advisory whole-file locks on an open file descriptor, on POSIX (``flock``) and Windows (``msvcrt``).

The platform code lives here so that ``import oracleproto`` works where ``fcntl`` does not exist.
A lock library such as ``filelock`` does not fit: our journals are locked through the very handle
that writes them (and renamed into place while locked), and the run's writer lock file holds the
writer's pid; ``filelock`` opens its own handle on a separate lock path and truncates it.

Semantics kept from ``flock``: the lock belongs to the open handle and the OS drops it when the
holder dies (kill -9 included), so a stale file never blocks anyone; a non-blocking attempt on a
held lock raises :class:`BlockingIOError`. On Windows ``msvcrt`` has no shared locks, so a shared
lock is an exclusive one there (only used to probe whether a writer is alive), and the locked range
is one byte far beyond any real file size, so reading and appending through other handles still works.
"""

from __future__ import annotations

import os
import sys
import time

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: Windows: the byte locked (beyond any cassette or journal, which never reach 2 GiB).
_WIN_LOCK_OFFSET = 0x7FFF_FFF0
_WIN_POLL_S = 0.05


def lock_exclusive(fd: int, *, blocking: bool = True) -> None:
    """Take an exclusive lock on ``fd``; BlockingIOError when ``blocking`` is False and it is held."""
    if fcntl is not None:
        flags = fcntl.LOCK_EX if blocking else fcntl.LOCK_EX | fcntl.LOCK_NB
        fcntl.flock(fd, flags)
        return
    _win_lock(fd, blocking=blocking)


def lock_shared(fd: int, *, blocking: bool = True) -> None:
    """Take a shared lock on ``fd`` (exclusive on Windows); BlockingIOError when held and not blocking."""
    if fcntl is not None:
        flags = fcntl.LOCK_SH if blocking else fcntl.LOCK_SH | fcntl.LOCK_NB
        fcntl.flock(fd, flags)
        return
    _win_lock(fd, blocking=blocking)


def unlock(fd: int) -> None:
    """Release the lock this handle holds on ``fd``."""
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return
    _win_unlock(fd)


def _win_lock(fd: int, *, blocking: bool) -> None:
    while True:
        try:
            _win_locking(fd, unlock=False)
            return
        except OSError:
            if not blocking:
                raise BlockingIOError(f"file descriptor {fd} is locked by another handle") from None
        time.sleep(_WIN_POLL_S)


def _win_unlock(fd: int) -> None:
    _win_locking(fd, unlock=True)


def _win_locking(fd: int, *, unlock: bool) -> None:
    if sys.platform == "win32":
        import msvcrt

        # msvcrt locks from the current position: move there, lock one byte, move back.
        here = os.lseek(fd, 0, os.SEEK_CUR)
        os.lseek(fd, _WIN_LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_UNLCK if unlock else msvcrt.LK_NBLCK, 1)
        finally:
            os.lseek(fd, here, os.SEEK_SET)
        return
    raise OSError("no file-locking primitive on this platform (neither fcntl nor msvcrt)")
