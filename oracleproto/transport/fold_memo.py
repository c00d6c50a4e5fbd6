"""What a recorder last wrote to each cassette file, so its next fold rewrites only what changed.

A fold merges the entries staged since the last one into their files. Without this memo each
fold read the whole file back, parsed and verified every entry (other writers may have
changed it), and re-rendered every entry's YAML — per fold, for a file that only grows, so a
long recording folding every ten minutes did it again and again. Now a fold that finds a file
holding exactly the bytes this process wrote last (same sha256) takes the entries from memory
and copies the text of every entry not staged since straight from those bytes: an entry's
``- `` list item does not depend on its neighbours, so the file comes out byte-identical to a
full rewrite. Any other bytes (another writer's fold, a removal, a hand edit) make the fold
parse and render everything, as before. Only byte offsets are kept, never the text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from oracleproto.transport.entry import Entry
from oracleproto.transport.fileio import VCR_FORMAT_VERSION, entry_fragment

_HEAD = b"interactions:\n"
_TAIL = f"version: {VCR_FORMAT_VERSION}\n".encode()
_EMPTY = b"interactions: []\n" + _TAIL


@dataclass(frozen=True)
class Written:
    """One file as this process wrote it: its sha256 and each entry's byte span in it."""

    sha256: str
    spans: dict[str, tuple[int, int]]


class FoldMemo:
    """Per cassette file, what the last fold of this process wrote there."""

    def __init__(self) -> None:
        self._files: dict[Path, Written] = {}

    def unchanged(self, path: Path) -> tuple[bytes, Written] | None:
        """The file's bytes and our record of them, when they are exactly what we last wrote."""
        known = self._files.get(path)
        if known is None:
            return None
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            data = b""
        if hashlib.sha256(data).hexdigest() != known.sha256:
            del self._files[path]
            return None
        return data, known

    def record(self, path: Path, written: Written) -> None:
        """Remember what was just written to ``path`` (call after the rename)."""
        self._files[path] = written

    def forget(self, path: Path) -> None:
        """Drop what is known about ``path`` (its write failed, or it is no longer ours)."""
        self._files.pop(path, None)


def write_reusing(
    out: BinaryIO | _Counter,
    entries: Iterable[Entry],
    reuse: Mapping[str, bytes | memoryview] | None = None,
    *,
    remember: bool = True,
) -> Written | None:
    """Write ``fileio.dump_entries(entries)`` to ``out`` entry by entry, taking the text of keys in ``reuse``.

    ``reuse`` maps keys to the list-item bytes written for exactly that entry before (unchanged
    since: a changed entry is staged again and must not be in ``reuse``). The file's text is
    never held whole: each entry's is written as it is rendered, so the fold needs no buffer the
    size of the file, nor the fresh memory one costs. ``remember``: return the file's sha256 and
    each entry's span (hashing costs ≈ 40 µs per 50 KB entry, so the last fold skips it).
    """
    ordered = sorted(entries, key=lambda e: e.key)
    hashed = hashlib.sha256() if remember else None
    spans: dict[str, tuple[int, int]] = {}

    def put(chunk: bytes | memoryview) -> int:
        out.write(chunk)
        if hashed is not None:
            hashed.update(chunk)
        return len(chunk)

    if not ordered:
        put(_EMPTY)
    else:
        reuse = reuse or {}
        pos = put(_HEAD)
        for entry in ordered:
            text = reuse.get(entry.key)
            size = put(text if text is not None else entry_fragment(entry).encode("utf-8"))
            spans[entry.key] = (pos, pos + size)
            pos += size
        put(_TAIL)
    return Written(hashed.hexdigest(), spans) if hashed is not None else None


class _Counter:
    """A sink that only counts what is written to it."""

    def __init__(self) -> None:
        self.size = 0

    def write(self, chunk: bytes | memoryview) -> int:
        self.size += len(chunk)
        return len(chunk)


def rendered_size(entries: Iterable[Entry], reuse: Mapping[str, bytes | memoryview] | None = None) -> int:
    """How many bytes :func:`write_reusing` writes for these entries (rendered, not kept)."""
    counter = _Counter()
    write_reusing(counter, entries, reuse, remember=False)
    return counter.size


def reusable(data: bytes, written: Written, staged: Iterable[str]) -> dict[str, memoryview]:
    """The written text of every entry of ``data`` except the ``staged`` ones (changed since), uncopied."""
    changed = set(staged)
    view = memoryview(data)
    return {key: view[start:end] for key, (start, end) in written.spans.items() if key not in changed}
