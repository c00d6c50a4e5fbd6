"""The shared import pipeline (paper Algorithm 3): filter → collapse → validate → write → report.

Source modules ingest and normalise their files into :class:`Candidate` rows and
:class:`Drop` records; this module applies the common filters, validates each row on its own
(a bad row is dropped with a reason, never aborting the import unless ``strict``), writes the
source DB byte-deterministically and returns the construction report.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from oracleproto.dataset.builder import features_document, write_db_atomically
from oracleproto.dataset.hashes import metadata_hash, source_db_hash
from oracleproto.dataset.importers.records import Candidate, Drop
from oracleproto.dataset.importers.report import build_report
from oracleproto.dataset.loader import METADATA_TABLE
from oracleproto.dataset.models import Question
from oracleproto.dataset.validation import duplicate_label_warnings, validate_rows, validate_templates
from oracleproto.errors import DatasetError, DatasetProblem
from oracleproto.primitives import killpoints
from oracleproto.primitives.fileio import atomic_write_text
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.primitives.oserrors import cannot_write

#: Version of the import record's shape; bump when the pipeline's output for the same input changes.
IMPORT_FORMAT_VERSION = 2
#: Strict-mode failures list at most this many bad rows (the report has them all).
_STRICT_LISTED = 20


@dataclass(frozen=True)
class SourceBatch:
    """What a source module hands the pipeline: normalised rows, drops and provenance."""

    importer: str
    inputs: tuple[Path, ...]
    items: tuple[Candidate | Drop, ...]
    options: Mapping[str, object]
    templates: Mapping[str, str]
    templates_origin: str
    description: str
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImportSettings:
    """Output options common to every importer."""

    table: str = "questions"
    dataset_name: str | None = None
    min_end_date: str | None = None
    strict: bool = False
    force: bool = False


@dataclass(frozen=True)
class ImportResult:
    """What an import wrote: the DB, its report file and the report itself."""

    path: Path
    report_path: Path
    report: dict[str, Any]
    questions: tuple[Question, ...] = field(default=())


def report_path_for(out: Path) -> Path:
    """Where the construction report of ``out`` goes: ``OUT.report.json`` beside it."""
    return out.with_name(out.name + ".report.json")


def _filter(batch: SourceBatch, settings: ImportSettings) -> tuple[list[Question], list[Drop]]:
    """Common filters, then per-row validation; returns kept questions and every drop (source order)."""
    drops: list[Drop] = []
    questions: list[Question] = []
    seen: set[str] = set()
    for item in batch.items:
        if isinstance(item, Drop):
            drops.append(item)
            continue
        if settings.min_end_date is not None and item.end_time < settings.min_end_date:
            drops.append(
                Drop(item.id, "before_min_end_date", "filtered", f"end_time {item.end_time} < --min-end-date")
            )
            continue
        if item.id in seen:
            drops.append(
                Drop(item.id, "duplicate_id", "bad", "an earlier row has the same id; kept the first")
            )
            continue
        seen.add(item.id)
        valid, problems = validate_rows([item.as_row()])
        if problems:
            drops.append(Drop(item.id, "invalid_row", "bad", "; ".join(p.reason for p in problems)))
            continue
        questions.extend(valid)
    questions.sort(key=lambda q: (q.end_time, q.id))
    return questions, drops


def _features(batch: SourceBatch, questions: list[Question], digests: list[dict[str, str]]) -> dict[str, Any]:
    document = features_document(
        questions,
        batch.templates,
        description=batch.description,
        timezone="Asia/Shanghai",
        source_name=", ".join(d["name"] for d in digests),
        source_sha256=digests[0]["sha256"],
    )
    document["provenance"] = {"builder": f"oracleproto dataset import {batch.importer}", "inputs": digests}
    document["import"] = {
        "importer": batch.importer,
        "version": IMPORT_FORMAT_VERSION,
        "inputs": digests,
        "options": {k: batch.options[k] for k in sorted(batch.options)},
        "templates_origin": batch.templates_origin,
    }
    return document


def _strict_error(source: str, bad: Sequence[Drop]) -> DatasetError:
    problems = [DatasetProblem(d.row_id, d.reason, d.detail) for d in bad[:_STRICT_LISTED]]
    if len(bad) > _STRICT_LISTED:
        problems.append(DatasetProblem(None, "rows", f"... and {len(bad) - _STRICT_LISTED} more bad row(s)"))
    problems.append(
        DatasetProblem(None, "strict", "--strict refuses bad rows; fix them or rerun without --strict")
    )
    return DatasetError(source, problems)


def run_import(batch: SourceBatch, out: Path, settings: ImportSettings) -> ImportResult:
    """Filter, validate, write ``out`` and ``OUT.report.json``; ``DatasetError`` on refusal."""
    if settings.min_end_date is not None:
        batch = replace(batch, options={**batch.options, "min_end_date": settings.min_end_date})
    source = ", ".join(str(p) for p in batch.inputs)
    report_path = report_path_for(out)
    if out.exists() and not settings.force:
        raise DatasetError(str(out), [DatasetProblem(None, "file", existing_output_reason(out))])
    template_problems = validate_templates(dict(batch.templates), column="templates")
    if template_problems:
        raise DatasetError(source, template_problems)
    questions, drops = _filter(batch, settings)
    bad = [d for d in drops if d.kind == "bad"]
    if settings.strict and bad:
        raise _strict_error(source, bad)
    if not questions:
        reasons = sorted({d.reason for d in drops})
        raise DatasetError(
            source,
            [
                DatasetProblem(
                    None,
                    "rows",
                    f"no row survived the import ({len(drops)} dropped: "
                    f"{', '.join(reasons) or 'no rows read'}); "
                    "check the input file and the importer options",
                )
            ],
        )
    digests = [{"name": p.name, "sha256": sha256_hex(p.read_bytes())} for p in batch.inputs]
    features = _features(batch, questions, digests)
    features_text = json.dumps(features, ensure_ascii=False, sort_keys=True, indent=2)
    metadata = (
        settings.dataset_name or settings.table,
        "eval",
        settings.table,
        len(questions),
        f"{questions[-1].end_time.isoformat()}T00:00:00Z",  # derived from the input, not the clock
        features_text,
    )
    _check_table_name(settings.table)
    try:
        # The report describes one DB: the old one goes first, so that a kill at any later moment
        # leaves a DB without a report (refused by the next import until --force), never a DB
        # beside another DB's report.
        report_path.unlink(missing_ok=True)
        write_db_atomically(out, settings.table, questions, metadata)
    except (OSError, sqlite3.Error) as exc:
        reason = cannot_write(out, exc) if isinstance(exc, OSError) else f"cannot write {out} ({exc})"
        raise DatasetError(str(out), [DatasetProblem(None, "file", reason)]) from None
    killpoints.reached("import-db")
    warnings = [str(w) for w in duplicate_label_warnings(questions)]
    report = build_report(
        importer=batch.importer,
        inputs=digests,
        options=batch.options,
        drops=drops,
        questions=questions,
        warnings=[*batch.notes, *warnings],
        output={
            "file": out.name,
            "table": settings.table,
            "source_db_hash": source_db_hash(out),
            "metadata_hash": metadata_hash(features_text),
        },
    )
    try:
        atomic_write_text(
            report_path, json.dumps(report, ensure_ascii=False, sort_keys=True, indent=2) + "\n"
        )
    except OSError as exc:
        out.unlink(missing_ok=True)  # no half output: the DB without its report is removed again
        raise DatasetError(
            str(report_path), [DatasetProblem(None, "file", cannot_write(report_path, exc))]
        ) from None
    return ImportResult(out, report_path, report, tuple(questions))


def existing_output_reason(out: Path) -> str:
    """Why an existing OUT is refused without --force: a finished import, or one stopped before its report."""
    report_path = report_path_for(out)
    try:
        recorded = json.loads(report_path.read_text(encoding="utf-8"))["output"]["source_db_hash"]
        matches = recorded == source_db_hash(out)
    except (OSError, ValueError, KeyError, TypeError):
        matches = False
    if matches or not out.is_file():
        return "already exists; pass --force to overwrite it"
    missing = "has no" if not report_path.exists() else "does not match its"
    return (
        f"already exists and {missing} construction report {report_path.name} (an import into it was "
        "stopped before writing the report, or the files were changed); pass --force to redo the import"
    )


def _check_table_name(table: str) -> None:
    if not table.isidentifier() or table == METADATA_TABLE:
        raise DatasetError(
            table,
            [
                DatasetProblem(
                    None,
                    "table",
                    f"table name {table!r} must be a plain identifier other than {METADATA_TABLE!r}",
                )
            ],
        )
