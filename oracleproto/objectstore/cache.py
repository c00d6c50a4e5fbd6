"""The local object cache: content-addressed, every object verified on the way in and on reuse.

``<cache>/objects/sha256/ab/<digest>`` holds only bytes that hashed to their name: a download is
streamed into ``<cache>/tmp/`` while hashed and counted, fsynced, and renamed into place only when
the digest and size match. A kill at any moment leaves complete verified objects and at most a
temporary file, which the next command removes (``tmp/<pid>-…``: a file whose process is gone).
So a rerun fetches exactly the objects still missing. An object reused later is hashed again (a
local disk can be damaged, or a file edited); a mismatch drops it and fetches it anew.

Default folder: ``CASSETTE_STORE_CACHE``, else ``$XDG_CACHE_HOME/oracleproto/store``
(``~/.cache/oracleproto/store``). Deleting it at any time is safe: it only costs downloads.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from oracleproto.objectstore.backend import Backend
from oracleproto.objectstore.errors import DamagedObjectError
from oracleproto.objectstore.naming import object_key
from oracleproto.primitives.fileio import fsync_dir

CACHE_ENV = "CASSETTE_STORE_CACHE"
_CHUNK = 1 << 20


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if env is None else env
    if environ.get(CACHE_ENV, "").strip():
        return Path(environ[CACHE_ENV]).expanduser()
    base = environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base) / "oracleproto" / "store"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def hash_file(path: Path) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


class ObjectCache:
    """Verified objects on local disk."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.tmp = root / "tmp"

    def prepare(self) -> None:
        """Create the folders, and remove temporary files of processes that died mid-download.

        Called before the first download, not on construction: a command refused for bad input
        leaves no cache folder behind.
        """
        self.tmp.mkdir(parents=True, exist_ok=True)
        for leftover in self.tmp.iterdir():
            pid = leftover.name.partition("-")[0]
            if not pid.isdigit() or not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    leftover.unlink()

    def path(self, sha: str) -> Path:
        return self.root / object_key(sha)

    def has(self, sha: str, size: int) -> bool:
        """True when a verified copy is here; a damaged one is removed (it will be fetched again)."""
        path = self.path(sha)
        if not path.is_file():
            return False
        if hash_file(path) == (sha, size):
            return True
        path.unlink(missing_ok=True)
        return False

    def fetch(self, backend: Backend, sha: str, size: int, name: str) -> int:
        """Download the object into the cache, verified; returns the bytes fetched."""
        key = object_key(sha)
        tmp = self.tmp / f"{os.getpid()}-{secrets.token_hex(6)}"
        digest, got = hashlib.sha256(), 0
        try:
            with tmp.open("wb") as handle:
                for chunk in backend.get_chunks(key):
                    got += len(chunk)
                    if got > size:
                        break  # longer than the index says: no need to read the rest
                    digest.update(chunk)
                    handle.write(chunk)
                handle.flush()
                os.fsync(handle.fileno())
            if got != size or digest.hexdigest() != sha:
                what = (
                    f"{got}{'+' if got > size else ''} bytes instead of {size}"
                    if got != size
                    else "other bytes"
                )
                raise DamagedObjectError(
                    f"store {backend.location}: object {key} ({name}) is damaged — {what}, "
                    f"{'truncated or extended' if got != size else 'its sha256 is not its name'}; "
                    "refusing it "
                    "(nothing was written into place); ask the store's owner to delete it and push the run "
                    "again "
                    "from a good copy"
                )
            target = self.path(sha)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, target)
            fsync_dir(target.parent)
        finally:
            tmp.unlink(missing_ok=True)
        return got
