"""Human labels of audit items: one append-only JSON-lines file per annotator (paper §4.3).

``DIR/labels/<annotator>.jsonl`` holds one :class:`Label` per line, in the order they were given;
a relabel appends a new line and the last line of an item wins. Appends are one ``write`` of a
whole line followed by ``fsync``, under a lock, so a label acknowledged to the labelling page is
on disk and a crash can at worst leave one torn final line — which readers skip with a warning
and the next append cuts off before writing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from oracleproto.errors import OracleprotoError
from oracleproto.primitives import safe_text
from oracleproto.primitives.fileio import fsync_dir
from oracleproto.primitives.oslock import lock_exclusive, unlock

#: The three answers an annotator can give (``unsure`` is excluded from the confusion matrix).
LabelValue = Literal["leak", "no-leak", "unsure"]
LABEL_VALUES: tuple[str, ...] = ("leak", "no-leak", "unsure")

#: Folder of the per-annotator files inside an audit directory.
LABELS_DIR = "labels"
LABELS_SUFFIX = ".jsonl"

# A file name on every platform: no separators, no leading dot (hidden files, "." and ".."),
# no spaces or shell metacharacters; short enough for any file system.
_ANNOTATOR_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

# One process may serve several threads; flock only excludes other processes on Linux when the
# descriptors differ, so a thread lock serialises appends inside this process as well.
_APPEND_LOCK = threading.Lock()


class LabelError(OracleprotoError):
    """A labels file or an annotator name is unusable; the message names it and how to fix it."""


class TornLabelLineWarning(UserWarning):
    """The last line of a labels file is incomplete (a crash mid-append); it was ignored."""


class Label(BaseModel):
    """One annotator's verdict on one audit item."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The audit item's ``item_id`` (as in ``audit.jsonl``).
    item_id: str
    #: ``leak``: the page reveals information from after the cutoff; ``no-leak``; ``unsure``.
    label: LabelValue
    #: Free text the annotator wrote (why, what gave it away); may be empty.
    note: str = ""
    #: When the label was given, ISO-8601 in UTC (``2026-01-31T12:00:00Z``).
    labelled_at: str

    @field_validator("item_id")
    @classmethod
    def _item_id_not_empty(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("item_id is empty")
        return value

    @field_validator("labelled_at")
    @classmethod
    def _utc_timestamp(cls, value: str) -> str:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"labelled_at {value!r} is not an ISO-8601 timestamp") from None
        offset = parsed.utcoffset()
        if offset is None or offset.total_seconds() != 0:
            raise ValueError(f"labelled_at {value!r} is not in UTC (end it with Z or +00:00)")
        return value


def utc_timestamp(moment: datetime | None = None) -> str:
    """``moment`` (default now) as an ISO-8601 UTC string with a ``Z``, to the second."""
    when = (moment or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def is_annotator_name(name: str) -> bool:
    """True when ``name`` can name a labels file (letters, digits, ``_.-``; no leading dot)."""
    return bool(_ANNOTATOR_RE.fullmatch(name)) and not name.endswith(LABELS_SUFFIX)


def check_annotator(annotator: str) -> str:
    """Return ``annotator`` if it is a safe file name, else raise :class:`LabelError`."""
    if not is_annotator_name(annotator):
        raise LabelError(
            f"annotator name {annotator!r} cannot name a labels file: use 1-64 letters, digits, '_', "
            "'-' or '.', starting with a letter or digit (e.g. --annotator alice)"
        )
    return annotator


def labels_path(audit_dir: Path, annotator: str) -> Path:
    """``DIR/labels/<annotator>.jsonl`` (the name is validated)."""
    return audit_dir / LABELS_DIR / f"{check_annotator(annotator)}{LABELS_SUFFIX}"


def label_line(label: Label) -> bytes:
    """The JSON line of one label (sorted keys, UTF-8, newline-terminated)."""
    # The note is free text (pasted from the page): escaped as in audit.jsonl (``safe_text``).
    return (safe_text.dumps(label.model_dump(), sort_keys=True) + "\n").encode("utf-8")


@contextlib.contextmanager
def _locked_append(path: Path) -> Iterator[int]:
    created = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        with _APPEND_LOCK:
            lock_exclusive(fd)
            try:
                yield fd
            finally:
                unlock(fd)
    finally:
        os.close(fd)
    if created:
        fsync_dir(path.parent)  # the new file's entry, or the fsynced data is unreachable after a crash


def _cut_torn_tail(fd: int, path: Path) -> None:
    """Drop an unterminated last line (never acknowledged) so the next line starts clean."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    if os.pread(fd, 1, size - 1) == b"\n":
        return
    # Read back until the previous newline; labels are short, so a small window usually suffices.
    start = size
    while start > 0:
        step = min(4096, start)
        chunk = os.pread(fd, step, start - step)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            start = start - step + cut + 1
            break
        start -= step
    warnings.warn(
        f"{path}: dropped an incomplete last line ({size - start} bytes, from an interrupted save)",
        TornLabelLineWarning,
        stacklevel=3,
    )
    os.ftruncate(fd, start)


def append_label(audit_dir: Path, annotator: str, label: Label) -> None:
    """Append ``label`` to ``DIR/labels/<annotator>.jsonl``: one whole line, fsynced before return."""
    append_labels(audit_dir, annotator, [label])


def append_labels(audit_dir: Path, annotator: str, labels: Iterable[Label]) -> None:
    """Append several labels in one write and one fsync (an import); nothing when ``labels`` is empty."""
    path = labels_path(audit_dir, annotator)
    data = b"".join(label_line(label) for label in labels)
    if not data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked_append(path) as fd:
        _cut_torn_tail(fd, path)
        start = os.fstat(fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        except OSError:
            # A failed write (disk full mid-line): cut back so no torn line stays behind, then fail.
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise


def parse_label_line(raw: bytes, *, path: Path, line_no: int) -> Label:
    """One line of a labels file as a :class:`Label`; a bad line raises naming file and line."""
    where = f"{path}, line {line_no}"
    try:
        value = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise LabelError(f"{where}: not UTF-8 text ({exc.reason}); fix or remove the line") from None
    except json.JSONDecodeError as exc:
        raise LabelError(f"{where}: not a JSON object ({exc.msg}); fix or remove the line") from None
    if not isinstance(value, dict):
        raise LabelError(f"{where}: not a JSON object; fix or remove the line")
    try:
        return Label.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'line'}: {err['msg']}" for err in exc.errors()
        )
        raise LabelError(f"{where}: not a valid label ({problems}); fix or remove the line") from None


def read_labels(
    audit_dir: Path, annotator: str, *, on_torn: Callable[[str], None] | None = None
) -> dict[str, Label]:
    """The labels of ``annotator`` by item id (last line wins); ``{}`` when there is no file yet.

    An unterminated, unparsable last line (a crash mid-append) is skipped and reported through
    ``on_torn`` — by default a :class:`TornLabelLineWarning`.
    """
    path = labels_path(audit_dir, annotator)
    if path.parent.exists() and not path.parent.is_dir():
        raise LabelError(f"{path.parent}: not a directory; move it away so labels can be saved in it")
    if path.exists() and not path.is_file():
        # A directory or a named pipe (opening a pipe would block until someone writes to it).
        raise LabelError(f"{path}: not a regular file; move it away so the labels file can be written")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise LabelError(f"{path}: cannot read the labels file ({exc.strerror or exc})") from exc
    lines = data.split(b"\n")
    # After a final newline split yields one empty string; anything else there is unterminated.
    tail = lines.pop()
    labels: dict[str, Label] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        label = parse_label_line(raw, path=path, line_no=number)
        labels[label.item_id] = label
    if tail.strip():
        try:
            label = parse_label_line(tail, path=path, line_no=len(lines) + 1)
        except LabelError:
            message = f"{path}, line {len(lines) + 1}: ignored an incomplete last line (an interrupted save)"
            if on_torn is not None:
                on_torn(message)
            else:
                warnings.warn(message, TornLabelLineWarning, stacklevel=2)
        else:
            labels[label.item_id] = label
    return labels


def annotators(audit_dir: Path) -> list[str]:
    """The annotators with a labels file in ``DIR/labels/``, sorted."""
    folder = audit_dir / LABELS_DIR
    if not folder.is_dir():
        return []
    names = []
    for path in folder.iterdir():
        if path.suffix != LABELS_SUFFIX or not path.is_file():
            continue
        name = path.name[: -len(LABELS_SUFFIX)]
        if is_annotator_name(name):
            names.append(name)
    return sorted(names)
