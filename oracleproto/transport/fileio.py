"""Cassette file I/O: deterministic YAML, append-only journals, file locks (files are replaced by
``primitives.fileio``)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import yaml

from oracleproto.errors import CassetteIntegrityError
from oracleproto.primitives.fileio import TEMP_SUFFIX
from oracleproto.primitives.oslock import lock_exclusive, unlock
from oracleproto.transport import safe_yaml, yaml_writer
from oracleproto.transport.entry import Entry, from_interaction, from_json_safe, stored_interaction
from oracleproto.transport.entry_stream import stream_entries

#: vcrpy's cassette format version.
VCR_FORMAT_VERSION = 1
#: Suffix of a journal being created (not yet locked): never listed as a journal.
_STAGING_SUFFIX = ".new"

T = TypeVar("T")

_BaseDumper: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[valid-type,misc]
    """Never writes anchors/aliases (the loader refuses them), even for objects shared by two entries."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _yaml_dump(data: Any) -> str:
    # The reference serialisation: yaml_writer reproduces it byte for byte and falls back to it.
    return str(yaml.dump(data, Dumper=_Dumper, sort_keys=True, allow_unicode=True, width=100))


def dump_entries(entries: Iterable[Entry]) -> bytes:
    """Deterministic YAML of entries sorted by key (vcrpy layout).

    The bytes are those of ``yaml.dump({"interactions": [...], "version": 1}, Dumper=_Dumper,
    sort_keys=True, allow_unicode=True, width=100)``, written by :mod:`yaml_writer` (several
    times faster) with a per-entry fallback to that call. An entry's digest verified on load is
    reused (a store clears it on every ``put``).
    """
    ordered = sorted(entries, key=lambda e: e.key)
    fragments = [entry_fragment(e) for e in ordered]
    return yaml_writer.document(fragments, VCR_FORMAT_VERSION).encode("utf-8")


def entry_fragment(entry: Entry) -> str:
    """One entry's text in a cassette file: its ``- `` list item, which does not depend on its neighbours."""
    return yaml_writer.fragment_or_dump(stored_interaction(entry), _yaml_dump)


def parse_entries(data: bytes, where: str) -> list[Entry]:
    """Parse and verify every entry of a cassette file's bytes (untrusted: no aliases, sizes capped)."""
    entries: list[Entry] = []
    stream_entries(data, where, entries.append)
    return entries


def read_cassette_bytes(path: Path) -> bytes:
    """The bytes of a cassette or journal file, refused before reading when over the file limit."""
    max_bytes = safe_yaml.MAX_CASSETTE_FILE_BYTES
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise CassetteIntegrityError(
                f"{path}: {size:,} bytes, over the cassette file limit of {max_bytes:,} bytes; "
                "it was not written by oracleproto (which splits cassettes per channel and model) — "
                "restore it from the original recording"
            )
        return path.read_bytes()
    except OSError as exc:
        raise CassetteIntegrityError(f"{path}: cannot read the cassette ({exc.strerror or exc})") from exc


def read_entries(path: Path) -> list[Entry]:
    """Entries of one cassette file (empty when the file does not exist)."""
    if not path.exists():
        return []
    return parse_entries(read_cassette_bytes(path), str(path))


def remove_stale_temps(root: Path) -> int:
    """Delete temp copies of cassette files a killed writer left (call under the cassette lock)."""
    removed = 0
    for tmp in root.rglob(f".*.yaml.*{TEMP_SUFFIX}"):
        if tmp.is_file():
            tmp.unlink(missing_ok=True)
            removed += 1
    return removed


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive file lock on ``path`` (created if needed) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as handle:
        lock_exclusive(handle.fileno())
        try:
            yield
        finally:
            unlock(handle.fileno())


def read_journal(path: Path) -> list[Entry]:
    """Entries of a journal; a torn last line (crash mid-write) is ignored, others verified."""
    lines = read_cassette_bytes(path).split(b"\n")
    entries: list[Entry] = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            raw: Any = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            if i == len(lines) - 1:
                break  # the in-flight write of a killed process
            raise CassetteIntegrityError(f"{path}, line {i + 1}: corrupt journal line") from exc
        entries.append(from_interaction(from_json_safe(raw), f"{path}, line {i + 1}"))
    return entries


class Journal:
    """An append-only JSON-lines journal held under an exclusive lock while its writer lives."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        # Created and locked under a name other writers do not list, then renamed into place:
        # a journal is never visible unlocked, so a writer starting at the same moment cannot
        # take it for an orphan (it used to claim it, and this writer's lock then failed).
        staging = path.with_name(f".{path.name}{_STAGING_SUFFIX}")
        self._handle = open(staging, "xb")  # noqa: SIM115 - lives as long as the journal
        try:
            lock_exclusive(self._handle.fileno(), blocking=False)
            os.rename(staging, path)
        except BaseException:
            self._handle.close()
            staging.unlink(missing_ok=True)
            raise

    def append(self, line: str) -> None:
        """Append one line; it reaches the OS before returning (survives kill -9)."""
        self.append_record(line.encode("utf-8") + b"\n")

    def append_record(self, record: bytes) -> None:
        """Append one line already encoded and newline-terminated (one write, no copy)."""
        self._handle.write(record)
        self._handle.flush()

    def truncate(self) -> None:
        """Forget the journaled lines (they are now in cassette files)."""
        self._handle.truncate(0)
        self._handle.seek(0)

    def close(self, *, delete: bool) -> None:
        """Release the lock and optionally delete the file."""
        if self._handle.closed:
            return
        if delete:
            self.path.unlink(missing_ok=True)
        unlock(self._handle.fileno())
        self._handle.close()


def try_claim_orphan(path: Path) -> Any | None:
    """Open and lock a journal whose writer is gone; None when a live process holds it.

    Also None when its writer deleted it meanwhile (a writer unlinks its journal, then unlocks
    it, on a clean close): the lock is then on a file nobody needs, and reading by path would fail.
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 - returned to the caller, closed there
    except FileNotFoundError:
        return None
    try:
        lock_exclusive(handle.fileno(), blocking=False)
    except BlockingIOError:
        handle.close()
        return None
    try:
        still_there = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        still_there = False
    if not still_there:
        handle.close()
        return None
    return handle
