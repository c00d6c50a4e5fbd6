"""``label.json``: the name and tags a user gives a run (``run --name/--tag``), beside the sealed run.

A label is the user's own bookkeeping, like a branch name: it is not part of the reproducibility
envelope, so it lives in its own file, not in ``manifest.json``. Renaming a run never touches its
seal, ``verify`` ignores the file, and bundles, the cassette store and the attestation leave it out
(``verify/attest.py``). ``runs list|show`` shows it and a RUN argument may name a run by it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from oracleproto.errors import StoreError
from oracleproto.primitives.fileio import atomic_write_text
from oracleproto.primitives.json_input import load_json

LABEL_NAME = "label.json"
#: Names and tags: what reads well in a table and never looks like a path or a run id prefix.
_TEXT_RE = re.compile(r"^[A-Za-z][A-Za-z0-9._+-]{0,63}$")


@dataclass(frozen=True)
class RunLabel:
    """A run's name (may be None) and tags (sorted, unique)."""

    name: str | None = None
    tags: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when there is neither a name nor a tag."""
        return self.name is None and not self.tags

    def text(self) -> str:
        """``name [tag, tag]`` for one table cell; empty when unlabelled."""
        tags = f"[{', '.join(self.tags)}]" if self.tags else ""
        return " ".join(part for part in (self.name or "", tags) if part)

    def merged(self, other: RunLabel) -> RunLabel:
        """This label with ``other``'s name (when given) and both tag sets."""
        return RunLabel(other.name or self.name, tuple(sorted({*self.tags, *other.tags})))


def check_label_text(value: str, what: str) -> str:
    """``value`` when it is a valid name or tag, else a :class:`StoreError` saying what is allowed."""
    if not _TEXT_RE.fullmatch(value):
        raise StoreError(
            f"{what} {value!r}: use 1-64 characters, letters, digits and . _ + -, starting with a letter "
            "(so it never reads as a path or a run id)"
        )
    return value


def make_label(name: str | None, tags: tuple[str, ...]) -> RunLabel:
    """A checked label from the ``--name`` and ``--tag`` values."""
    if name is not None:
        check_label_text(name, "--name")
    for tag in tags:
        check_label_text(tag, "--tag")
    return RunLabel(name, tuple(sorted(set(tags))))


def read_label(run_root: Path) -> RunLabel:
    """The run's label; an absent or unreadable file is no label (it is never needed to read a run)."""
    try:
        data = load_json((run_root / LABEL_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return RunLabel()
    if not isinstance(data, dict):
        return RunLabel()
    name = data.get("name")
    tags = data.get("tags")
    ok_name = name if isinstance(name, str) and _TEXT_RE.fullmatch(name) else None
    ok_tags = (
        tuple(sorted({t for t in tags if isinstance(t, str) and _TEXT_RE.fullmatch(t)}))
        if isinstance(tags, list)
        else ()
    )
    return RunLabel(ok_name, ok_tags)


def write_label(run_root: Path, label: RunLabel) -> Path:
    """Write (atomically) the run's label, merged with the one it already has."""
    merged = read_label(run_root).merged(label)
    path = run_root / LABEL_NAME
    text = json.dumps({"name": merged.name, "tags": list(merged.tags)}, indent=2, sort_keys=True) + "\n"
    atomic_write_text(path, text)
    return path
