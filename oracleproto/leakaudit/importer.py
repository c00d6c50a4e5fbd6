"""``audit import``: labels from a spreadsheet (``item_id,label[,note]``), all or nothing.

Every row is checked before the first label is written — unknown item ids, labels outside
leak / no-leak / unsure (or the labelling page's keys L / N / U, any case), duplicate ids, a missing
header — so a bad file changes nothing.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from oracleproto.leakaudit.items import AuditError, read_items
from oracleproto.leakaudit.labels import LABEL_VALUES, Label, append_labels, check_annotator, utc_timestamp

_MAX_SHOWN = 5
#: The labelling page's own names: its keys (L, N, U) and its buttons' words (``No leak``).
SHORTHANDS = {"l": "leak", "n": "no-leak", "u": "unsure", "no leak": "no-leak", "no_leak": "no-leak"}


def parse_label_csv(path: Path, known: set[str], labelled_at: str) -> list[Label]:
    """The labels of ``path``; any problem raises :class:`AuditError` listing the bad rows."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise AuditError(f"{path}: not UTF-8 text (byte {exc.start}); save the sheet as UTF-8 CSV") from None
    except OSError as exc:
        raise AuditError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    rows = [r for r in csv.reader(io.StringIO(text, newline="")) if any(cell.strip() for cell in r)]
    if not rows:
        raise AuditError(f"{path}: empty; expected a header `item_id,label[,note]` and one row per item")
    header = [h.strip().lower() for h in rows[0]]
    if header[:2] != ["item_id", "label"] or len(header) > 3 or (len(header) == 3 and header[2] != "note"):
        raise AuditError(
            f"{path}, line 1: the header is {rows[0]}, expected `item_id,label` or `item_id,label,note`"
        )
    problems: list[str] = []
    seen: set[str] = set()
    labels: list[Label] = []
    for number, row in enumerate(rows[1:], start=2):
        cells = [c.strip() for c in row]
        if len(cells) < 2 or len(cells) > len(header):
            problems.append(f"line {number}: {len(cells)} cells, expected {len(header)}")
            continue
        item_id, value = cells[0], cells[1].lower()
        value = SHORTHANDS.get(value, value)
        note = row[2] if len(row) > 2 else ""
        if item_id not in known:
            problems.append(f"line {number}: unknown item_id {item_id!r}")
        elif item_id in seen:
            problems.append(f"line {number}: item_id {item_id!r} appears twice")
        if value not in LABEL_VALUES:
            problems.append(
                f"line {number}: label {cells[1]!r} is not one of {', '.join(LABEL_VALUES)} (or the page's "
                "keys L, N, U)"
            )
        seen.add(item_id)
        if not problems:
            labels.append(Label(item_id=item_id, label=value, note=note, labelled_at=labelled_at))
    if problems:
        shown = "; ".join(problems[:_MAX_SHOWN])
        more = f" (and {len(problems) - _MAX_SHOWN} more)" if len(problems) > _MAX_SHOWN else ""
        raise AuditError(f"{path}: {len(problems)} bad rows, nothing imported: {shown}{more}")
    return labels


def import_labels(audit_dir: Path, csv_path: Path, annotator: str, labelled_at: str | None = None) -> int:
    """Validate the whole sheet, then append every label for ``annotator``; returns how many."""
    check_annotator(annotator)
    known = {i.item_id for i in read_items(audit_dir)}
    labels = parse_label_csv(csv_path, known, labelled_at or utc_timestamp())
    # One write and one fsync for the whole batch: a failure leaves none of it behind.
    append_labels(audit_dir, annotator, labels)
    return len(labels)
