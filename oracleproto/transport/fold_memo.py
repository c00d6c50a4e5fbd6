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

    def record(self, path: Path, data: bytes, spans: dict[str, tuple[int, int]]) -> None:
        """Remember the bytes just written to ``path`` (call after the rename)."""
        self._files[path] = Written(hashlib.sha256(data).hexdigest(), spans)

    def forget(self, path: Path) -> None:
        """Drop what is known about ``path`` (its write failed, or it is no longer ours)."""
        self._files.pop(path, None)


def dump_reusing(
    entries: Iterable[Entry], reuse: Mapping[str, bytes] | None = None
) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """``fileio.dump_entries(entries)`` and each entry's span, taking the text of keys in ``reuse``.

    ``reuse`` maps keys to the list-item bytes written for exactly that entry before (unchanged
    since: a changed entry is staged again and must not be in ``reuse``).
    """
    ordered = sorted(entries, key=lambda e: e.key)
    if not ordered:
        return _EMPTY, {}
    reuse = reuse or {}
    parts = [_HEAD]
    spans: dict[str, tuple[int, int]] = {}
    pos = len(_HEAD)
    for entry in ordered:
        text = reuse.get(entry.key)
        if text is None:
            text = entry_fragment(entry).encode("utf-8")
        spans[entry.key] = (pos, pos + len(text))
        pos += len(text)
        parts.append(text)
    parts.append(_TAIL)
    return b"".join(parts), spans


def reusable(data: bytes, written: Written, staged: Iterable[str]) -> dict[str, bytes]:
    """The written text of every entry of ``data`` except the ``staged`` ones (changed since)."""
    changed = set(staged)
    return {key: data[start:end] for key, (start, end) in written.spans.items() if key not in changed}
