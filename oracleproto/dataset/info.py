"""Dataset summary in the paper's Table 1 shape (question type × answering mode) plus dates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from oracleproto.dataset.hashes import metadata_hash, source_db_hash
from oracleproto.dataset.loader import read_features_json, read_raw_rows
from oracleproto.dataset.models import CHOICE_TYPES, QUESTION_TYPES, Question
from oracleproto.dataset.validation import validate_rows
from oracleproto.errors import DatasetError

#: Row labels of the paper's Table 1, keyed by question_type.
ROW_LABELS: dict[str, str] = {
    "yes_no": "Yes/No",
    "binary_named": "Binary Choice",
    "multiple_choice": "Multiple Choice",
}
COLUMN_LABELS: dict[str, str] = {"single": "Single-answer", "multi": "Multi-answer"}


@dataclass(frozen=True)
class DatasetInfo:
    """Counts by (question_type, choice_type) and the end_time range of a question list."""

    counts: tuple[tuple[str, str, int], ...]
    first_end_time: date | None
    last_end_time: date | None

    def count(self, question_type: str | None = None, choice_type: str | None = None) -> int:
        """Count for a cell, a row/column margin (``None`` = all), or the grand total."""
        return sum(
            n for qt, ct, n in self.counts if question_type in (None, qt) and choice_type in (None, ct)
        )

    def table(self) -> dict[str, dict[str, int]]:
        """Table 1 as nested dicts: question_type (and ``total``) → single / multi / total."""
        rows: list[str | None] = [*QUESTION_TYPES, None]
        return {
            qt or "total": {**{ct: self.count(qt, ct) for ct in CHOICE_TYPES}, "total": self.count(qt)}
            for qt in rows
        }


def summarize(questions: Sequence[Question]) -> DatasetInfo:
    """Summarise validated questions (pure)."""
    counts = tuple(
        (qt, ct, sum(1 for q in questions if q.question_type == qt and q.choice_type == ct))
        for qt in QUESTION_TYPES
        for ct in CHOICE_TYPES
    )
    dates = [q.end_time for q in questions]
    return DatasetInfo(counts, min(dates, default=None), max(dates, default=None))


def render_table(info: DatasetInfo) -> str:
    """Table 1 as aligned text: rows Yes/No, Binary Choice, Multiple Choice, Total."""
    header = ["Question Type", *COLUMN_LABELS.values(), "Total"]
    body = [
        [ROW_LABELS.get(qt, "Total"), *(str(v) for v in cells.values())] for qt, cells in info.table().items()
    ]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest])

    return "\n".join([line(header), *(line(r) for r in body)])


def date_range_text(info: DatasetInfo) -> str:
    """``first .. last`` or ``none`` for an empty dataset."""
    if info.first_end_time is None or info.last_end_time is None:
        return "none"
    return f"{info.first_end_time.isoformat()}..{info.last_end_time.isoformat()}"


@dataclass(frozen=True)
class DbInfo:
    """``dataset info`` of one DB: resolved table, Table 1 summary and the dataset hashes."""

    table: str
    summary: DatasetInfo
    source_db_hash: str
    metadata_hash: str

    def as_json(self) -> dict[str, Any]:
        """JSON-ready form (``dataset info --json``)."""
        first, last = self.summary.first_end_time, self.summary.last_end_time
        return {
            "table": self.table,
            "questions": self.summary.count(),
            "counts": self.summary.table(),
            "end_time_range": {
                "min": first.isoformat() if first else None,
                "max": last.isoformat() if last else None,
            },
            "source_db_hash": self.source_db_hash,
            "metadata_hash": self.metadata_hash,
        }

    def render_text(self) -> str:
        """Human-readable form (``dataset info``)."""
        return "\n".join(
            [
                f"table {self.table}: {self.summary.count()} questions",
                "",
                render_table(self.summary),
                "",
                f"end_time range: {date_range_text(self.summary)}",
                f"source_db_hash: {self.source_db_hash}",
                f"metadata_hash:  {self.metadata_hash}",
            ]
        )


def db_info(db_path: Path | str, table: str | None = None) -> DbInfo:
    """Validate a DB and summarise it; ``DatasetError`` lists every problem of a bad DB."""
    name, rows = read_raw_rows(db_path, table)
    questions, problems = validate_rows(rows)
    if problems:
        raise DatasetError(str(db_path), problems)
    features = read_features_json(db_path)
    return DbInfo(name, summarize(questions), source_db_hash(db_path), metadata_hash(features))
