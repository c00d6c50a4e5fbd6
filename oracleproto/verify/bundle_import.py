"""``bundle import``: stream a stranger's bundle into a folder, checking before anything lands.

One pass over the gzip stream, never holding a member in memory:

1. ``bundle.json`` must be the first member (the exporter sorts it first); it is size-capped,
   digest-checked and validated before any other member is looked at.
2. Every other member must be a regular file listed there, whose tar-header size equals the
   listed size (checked before a byte of it is read); it is copied in 1 MiB chunks into a
   temporary sibling of DEST while being hashed, and refused on a digest mismatch.
3. The decompressed stream is metered: more bytes than the listed sizes plus tar framing is a
   compression bomb (or hidden data in tar headers) and is refused as soon as it is read.
4. Only a complete, checked import is renamed to DEST; on any failure the temporary folder
   (and any parent folder the import created) is removed, so DEST is exactly as it was. A killed
   import cannot do that: the next import into the same DEST removes its folder (told from a live
   one's by the lock the live one holds inside it).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import shutil
import tarfile
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

from oracleproto.primitives import killpoints
from oracleproto.primitives.oslock import lock_exclusive
from oracleproto.primitives.paths import confined, first_missing_ancestor
from oracleproto.verify.bundle_schema import (
    BUNDLE_MANIFEST,
    MAX_MANIFEST_BYTES,
    BundleError,
    BundleManifest,
    check_member_name,
    parse_bundle_manifest,
)

_CHUNK = 1024 * 1024
#: Locked by a live import inside its temporary folder (removed before the folder becomes DEST).
_LOCK_NAME = ".importing"
#: Tar framing allowed per member (header block, padding, a PAX header for long names).
_FRAMING_PER_MEMBER = 8 * 1024
#: Tar framing of the archive as a whole (end-of-archive blocks, record padding).
_FRAMING_ARCHIVE = 64 * 1024


@dataclass(frozen=True)
class ImportedBundle:
    """Where an imported bundle's pieces are."""

    root: Path
    run_dir: Path
    dataset: Path | None
    manifest: dict[str, Any]


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _MeteredReader:
    """A read-only stream that refuses to yield more than ``budget`` bytes in total."""

    def __init__(self, raw: _Readable, budget: int, where: str) -> None:
        self._raw = raw
        self.budget = budget
        self.consumed = 0
        self._where = where

    def read(self, size: int = -1) -> bytes:
        """Read at most ``size`` bytes (never past the budget, even when asked for more)."""
        remaining = self.budget - self.consumed
        want = remaining + 1 if size < 0 or size > remaining else size
        data = self._raw.read(want)
        self.consumed += len(data)
        if self.consumed > self.budget:
            raise BundleError(
                f"{self._where}: decompresses to more than {self.budget:,} bytes, more than its members "
                "declare (a compression bomb or data hidden in tar headers); refusing to import"
            )
        return data


def _copy_checked(handle: IO[bytes], target: Path, size: int, name: str, where: str) -> str:
    digest = hashlib.sha256()
    written = 0
    with open(target, "xb") as out:
        while written < size:
            chunk = handle.read(min(_CHUNK, size - written))
            if not chunk:
                break
            digest.update(chunk)
            out.write(chunk)
            written += len(chunk)
    if written != size:
        raise BundleError(f"{where}: member {name} is truncated ({written:,} of {size:,} bytes)")
    return digest.hexdigest()


def _regular(info: tarfile.TarInfo, where: str) -> str:
    name = info.name
    if not info.isreg() or info.issparse():
        kind = (
            "a symlink"
            if info.issym()
            else "a hard link"
            if info.islnk()
            else "a directory"
            if info.isdir()
            else "a sparse file"
            if info.issparse()
            else "a device or fifo"
        )
        raise BundleError(f"{where}: member {name!r} is {kind}, not a regular file; refusing to import")
    return name


def _read_manifest(tar: tarfile.TarFile, where: str) -> tuple[dict[str, Any], BundleManifest]:
    info = tar.next()
    if info is None or info.name != BUNDLE_MANIFEST:
        first = "nothing" if info is None else repr(info.name)
        raise BundleError(
            f"{where}: the first member is {first}, not {BUNDLE_MANIFEST}; not an oracleproto bundle"
        )
    _regular(info, where)
    if info.size > MAX_MANIFEST_BYTES:
        raise BundleError(f"{where}: {BUNDLE_MANIFEST} is {info.size:,} bytes, over {MAX_MANIFEST_BYTES:,}")
    handle = tar.extractfile(info)
    if handle is None:  # pragma: no cover - a regular member always has a file object
        raise BundleError(f"{where}: {BUNDLE_MANIFEST} cannot be read")
    return parse_bundle_manifest(handle.read(), where)


def _extract_into(bundle: Path, tmp: Path) -> tuple[dict[str, Any], BundleManifest]:
    where = str(bundle)
    with open(bundle, "rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
        meter = _MeteredReader(gz, MAX_MANIFEST_BYTES + _FRAMING_ARCHIVE, where)
        with tarfile.open(fileobj=meter, mode="r|") as tar:  # type: ignore[call-overload]
            body, model = _read_manifest(tar, where)
            meter.budget = (
                meter.consumed
                + model.total_bytes
                + _FRAMING_PER_MEMBER * len(model.members)
                + _FRAMING_ARCHIVE
            )
            seen: set[str] = set()
            while (info := tar.next()) is not None:  # iterating the TarFile would restart at bundle.json
                name = check_member_name(_regular(info, where), model.run_id, where)
                listed = model.members.get(name)
                if listed is None:
                    raise BundleError(f"{where}: member {name} is not listed in {BUNDLE_MANIFEST}")
                if name in seen:
                    raise BundleError(f"{where}: member {name} appears twice in the archive")
                seen.add(name)
                if info.size != listed.size:
                    raise BundleError(
                        f"{where}: member {name} is {info.size:,} bytes in the archive but {BUNDLE_MANIFEST} "
                        f"lists {listed.size:,}; refusing to import"
                    )
                target = confined(tmp, name, what=f"{where}: member", error=BundleError)
                target.parent.mkdir(parents=True, exist_ok=True)
                handle = tar.extractfile(info)
                if handle is None:  # pragma: no cover - a regular member always has a file object
                    raise BundleError(f"{where}: member {name} cannot be read")
                if _copy_checked(handle, target, info.size, name, where) != listed.sha256:
                    raise BundleError(
                        f"{where}: member {name} does not match its sha256 in {BUNDLE_MANIFEST}"
                    )
                killpoints.reached("bundle-member")
    missing = sorted(set(model.members) - seen)
    if missing:
        raise BundleError(f"{where}: member {missing[0]} is listed in {BUNDLE_MANIFEST} but missing")
    return body, model


def _temp_prefix(dest: Path) -> str:
    return f".{dest.name}.import-"


def remove_stale_imports(dest: Path) -> list[Path]:
    """Remove the temporary folders of imports into ``dest`` whose process is gone; returns them.

    A killed import (kill -9, a closed terminal) cannot clean up after itself: its folder stays
    beside DEST. A live import holds the lock file inside its folder, so only dead ones are
    removed; a folder still without a lock file is removed only when empty (its importer died
    right after creating it — one starting now would fail on it and say so).
    """
    removed: list[Path] = []
    if not dest.parent.is_dir():
        return removed
    for stale in sorted(dest.parent.glob(f"{_temp_prefix(dest)}*")):
        if not stale.is_dir() or stale.is_symlink():
            continue
        try:
            handle = open(stale / _LOCK_NAME, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            with contextlib.suppress(OSError):
                stale.rmdir()  # only an empty one
                removed.append(stale)
            continue
        with handle:
            try:
                lock_exclusive(handle.fileno(), blocking=False)
            except BlockingIOError:
                continue  # a live import into the same folder
            shutil.rmtree(stale, ignore_errors=True)
            removed.append(stale)
    return removed


def import_bundle(bundle: Path, dest: Path) -> ImportedBundle:
    """Check every member while streaming it into a temporary sibling of ``dest``, then rename it."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BundleError(f"{dest} exists and is not empty; import into a new or empty folder")
    remove_stale_imports(dest)
    created = first_missing_ancestor(dest.parent)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=_temp_prefix(dest), dir=dest.parent))
    lock = None
    try:
        # Held while this import lives: a rerun after a kill tells a dead import's folder by it.
        lock = open(tmp / _LOCK_NAME, "xb")  # noqa: SIM115 - closed in the finally below
        lock_exclusive(lock.fileno(), blocking=False)
        try:
            body, model = _extract_into(bundle, tmp)
        except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise BundleError(f"{bundle}: not a readable .tar.gz bundle ({exc})") from exc
        except OSError as exc:
            raise BundleError(f"{bundle}: cannot import ({exc.strerror or exc})") from exc
        (tmp / BUNDLE_MANIFEST).write_text(
            json.dumps(body, sort_keys=True, indent=1) + "\n", encoding="utf-8"
        )
        (tmp / _LOCK_NAME).unlink()  # not part of the bundle (the handle keeps the lock till the end)
        emptied = dest.exists()
        if emptied:
            dest.rmdir()
        try:
            tmp.rename(dest)
        except OSError:
            if emptied:
                dest.mkdir()
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise
    finally:
        if lock is not None:
            lock.close()
    member = model.dataset.member
    return ImportedBundle(dest, dest / "run" / model.run_id, None if member is None else dest / member, body)
