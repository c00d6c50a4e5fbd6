"""Read builder input: question rows from JSONL or CSV, templates from a JSON file.

Structural problems (bad JSON line, unknown column) are collected like row problems so one
run of ``dataset build`` reports everything wrong with the input.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from oracleproto.dataset.validation import COLUMNS
from oracleproto.errors import DatasetError, DatasetProblem

ROW_SUFFIXES: dict[str, str] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv"}


def _unknown_columns(keys: list[str], where: str) -> list[DatasetProblem]:
    expected = ", ".join(COLUMNS)
    return [
        DatasetProblem(where, key, f"unknown column {key!r}; expected only {expected}")
        for key in keys
        if key not in COLUMNS
    ]


def _read_jsonl(text: str) -> tuple[list[dict[str, object]], list[DatasetProblem]]:
    rows: list[dict[str, object]] = []
    problems: list[DatasetProblem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue  # blank lines (e.g. a trailing newline pair) carry no row
        where = f"line {number}"
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(DatasetProblem(where, "json", f"not valid JSON ({exc.msg} at char {exc.pos})"))
            continue
        if not isinstance(value, dict):
            problems.append(
                DatasetProblem(where, "json", f"expected a JSON object, got {type(value).__name__}")
            )
            continue
        problems.extend(_unknown_columns(list(value), where))
        rows.append(value)
    return rows, problems


def _read_csv(text: str) -> tuple[list[dict[str, object]], list[DatasetProblem]]:
    reader = csv.DictReader(text.splitlines())
    header = list(reader.fieldnames or [])
    problems = _unknown_columns(header, "header")
    problems.extend(
        DatasetProblem("header", column, "missing column in the CSV header")
        for column in COLUMNS
        if column not in header
    )
    rows: list[dict[str, object]] = []
    for record in reader:
        if None in record:
            where = f"line {reader.line_num}"
            problems.append(DatasetProblem(where, "csv", "more fields than header columns"))
            continue
        rows.append({k: v for k, v in record.items() if k is not None})
    return rows, problems


def read_rows(path: Path | str) -> tuple[list[dict[str, object]], list[DatasetProblem]]:
    """Raw rows of a ``.jsonl``/``.ndjson``/``.csv`` file plus structural problems (UTF-8)."""
    source = Path(path)
    kind = ROW_SUFFIXES.get(source.suffix.lower())
    if kind is None:
        raise DatasetError(
            str(source),
            [
                DatasetProblem(
                    None, "file", f"unknown input format {source.suffix!r}; use .jsonl, .ndjson or .csv"
                )
            ],
        )
    try:
        text = source.read_text(encoding="utf-8-sig")  # tolerate the BOM spreadsheets write
    except FileNotFoundError:
        raise DatasetError(str(source), [DatasetProblem(None, "file", "no such file")]) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(
            str(source), [DatasetProblem(None, "file", f"not UTF-8 text ({exc.reason})")]
        ) from None
    return _read_jsonl(text) if kind == "jsonl" else _read_csv(text)


def read_templates_file(path: Path | str) -> object:
    """The JSON value of a templates file (a ``prompt_reconstruction`` mapping, validated later)."""
    source = Path(path)
    try:
        return json.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(str(source), [DatasetProblem(None, "templates", "no such file")]) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(
            str(source), [DatasetProblem(None, "templates", f"not a JSON file ({exc})")]
        ) from None
