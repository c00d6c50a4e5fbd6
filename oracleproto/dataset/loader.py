"""Read an OracleProto source SQLite DB: the questions table and the prompt templates.

The DB is opened read-only (a missing path must not create an empty database), every row is
validated, and a :class:`DatasetError` listing every problem is raised before anything is
returned.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from oracleproto.dataset.demo import demo_templates
from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.dataset.validation import (
    COLUMNS,
    duplicate_label_warnings,
    missing_columns,
    validate_rows,
    validate_templates,
)
from oracleproto.errors import DatasetError, DatasetProblem
from oracleproto.primitives.sqlite_readonly import connect_readonly

METADATA_TABLE = "dataset_metadata"


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _fail(db_path: Path, column: str, reason: str) -> DatasetError:
    return DatasetError(str(db_path), [DatasetProblem(None, column, reason)])


@contextmanager
def open_readonly(db_path: Path | str) -> Iterator[sqlite3.Connection]:
    """Open ``db_path`` read-only; a missing file or a non-SQLite file is a ``DatasetError``."""
    path = Path(db_path)
    if path.is_dir():
        raise _fail(path, "file", "is a directory; pass the path of an OracleProto SQLite DB file")
    if path.exists() and not path.is_file():
        raise _fail(path, "file", "not a regular file (a pipe or a device); pass a SQLite DB file")
    if not path.is_file():
        raise _fail(path, "file", "no such file; pass the path of an OracleProto SQLite DB")
    if not os.access(path, os.R_OK):
        raise _fail(path, "file", "permission denied; make the file readable (chmod u+r) and rerun")
    try:
        conn = connect_readonly(path)
    except sqlite3.Error as exc:  # pragma: no cover - connect is lazy; errors surface on first query
        raise _fail(path, "file", f"cannot open: {exc}") from exc
    with closing(conn):
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            raise _fail(path, "file", f"not a valid SQLite database ({exc}); restore the file") from exc
        try:
            yield conn
        except sqlite3.DatabaseError as exc:
            if "decode" in str(exc):
                raise _fail(
                    path, "text", f"a text value is not valid UTF-8 ({exc}); store the row's text as UTF-8"
                ) from exc
            # The header and schema read fine but a table page is damaged (truncated or corrupt file).
            raise _fail(
                path, "file", f"not a valid SQLite database: a page is damaged ({exc}); restore the file"
            ) from exc


def _tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
    ).fetchall()
    return [str(r[0]) for r in rows]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(r[1]) for r in conn.execute(f"PRAGMA table_info({_quote(table)})").fetchall()]


def question_tables(conn: sqlite3.Connection) -> list[str]:
    """Names of the tables that have all seven question columns, sorted."""
    return [t for t in _tables(conn) if not missing_columns(_columns(conn, t))]


def resolve_table(conn: sqlite3.Connection, db_path: Path, table: str | None) -> str:
    """The questions table: ``table`` if given (checked), else the only table with the seven columns."""
    tables = _tables(conn)
    if table is not None:
        if table not in tables:
            raise _fail(
                db_path, "table", f"no table {table!r}; tables in this DB: {', '.join(tables) or 'none'}"
            )
        missing = missing_columns(_columns(conn, table))
        if missing:
            raise _fail(db_path, "table", f"table {table!r} lacks column(s) {', '.join(missing)}")
        return table
    candidates = question_tables(conn)
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise _fail(
            db_path,
            "table",
            f"no table has the seven question columns ({', '.join(COLUMNS)}); "
            f"tables in this DB: {', '.join(tables) or 'none'}",
        )
    raise _fail(
        db_path,
        "table",
        f"several tables have the question columns: {', '.join(candidates)}; choose one with --table",
    )


def read_raw_rows(db_path: Path | str, table: str | None = None) -> tuple[str, list[dict[str, object]]]:
    """The resolved table name and its rows as column → value dicts, unvalidated, in scan order."""
    path = Path(db_path)
    with open_readonly(path) as conn:
        name = resolve_table(conn, path, table)
        select = ", ".join(_quote(c) for c in COLUMNS)
        cursor = conn.execute(f"SELECT {select} FROM {_quote(name)}")
        rows = [dict(zip(COLUMNS, row, strict=True)) for row in cursor.fetchall()]
    return name, rows


def _empty_table(name: str) -> DatasetProblem:
    return DatasetProblem(
        None, "table", f"table {name!r} is empty (0 rows); add the questions, or pass the DB that holds them"
    )


def load_questions(db_path: Path | str, table: str | None = None) -> list[Question]:
    """Load and validate every question, ordered by (end_time, id); ``DatasetError`` lists all problems."""
    name, rows = read_raw_rows(db_path, table)
    if not rows:
        raise DatasetError(str(db_path), [_empty_table(name)])
    questions, problems = validate_rows(rows)
    if problems:
        raise DatasetError(str(db_path), problems)
    return questions


#: Why a DB without ``dataset_metadata`` still renders: the note stored in the stand-in features.
DEFAULT_TEMPLATES_NOTE = (
    "the source DB has no dataset_metadata table; oracleproto's default prompt templates are used"
)
#: The legacy single key an earlier implementation used for both multiple-choice branches.
LEGACY_MC_KEY = "multiple_choice_output_format"


def default_features_json() -> str:
    """Stand-in ``features_json`` for a DB without ``dataset_metadata``: default templates, marked."""
    document = {"prompt_reconstruction": demo_templates(), "templates_origin": DEFAULT_TEMPLATES_NOTE}
    return json.dumps(document, ensure_ascii=False, sort_keys=True, indent=2)


def has_metadata_table(db_path: Path | str) -> bool:
    """Whether the DB has a ``dataset_metadata`` table at all."""
    with open_readonly(Path(db_path)) as conn:
        return METADATA_TABLE in _tables(conn)


def read_features_json(db_path: Path | str) -> str:
    """The raw ``dataset_metadata.features_json`` text (input of ``metadata_hash``).

    A DB with no ``dataset_metadata`` table at all (other OracleProto versions ship such files)
    gets :func:`default_features_json`, so it loads as it is and its hash records the fallback.
    """
    path = Path(db_path)
    with open_readonly(path) as conn:
        if METADATA_TABLE not in _tables(conn):
            return default_features_json()
        if "features_json" not in _columns(conn, METADATA_TABLE):
            raise _fail(path, "features_json", f"table {METADATA_TABLE} has no features_json column")
        rows = conn.execute(f"SELECT features_json FROM {METADATA_TABLE}").fetchall()
    if len(rows) != 1:
        raise _fail(path, "features_json", f"{METADATA_TABLE} must hold exactly one row, found {len(rows)}")
    value = rows[0][0]
    if not isinstance(value, str):
        raise _fail(path, "features_json", f"features_json must be text, got {type(value).__name__}")
    return value


def templates_from_features(features_json: str) -> tuple[PromptTemplates | None, list[DatasetProblem]]:
    """Parse ``features_json`` text and extract ``prompt_reconstruction``; problems instead of raising."""
    try:
        features = json.loads(features_json)
    except json.JSONDecodeError as exc:
        return None, [
            DatasetProblem(
                None, "features_json", f"features_json is not valid JSON ({exc.msg} at char {exc.pos})"
            )
        ]
    if not isinstance(features, dict) or "prompt_reconstruction" not in features:
        return None, [
            DatasetProblem(None, "features_json", "features_json has no 'prompt_reconstruction' object")
        ]
    mapping = normalise_legacy_templates(features["prompt_reconstruction"])
    problems = validate_templates(mapping)
    if problems:
        return None, problems
    return PromptTemplates.from_mapping(cast(dict[str, str], mapping)), []  # validated: str → str


def normalise_legacy_templates(mapping: object) -> object:
    """Fill both multiple-choice keys from the legacy single key when both are absent; extras kept."""
    if not isinstance(mapping, dict) or LEGACY_MC_KEY not in mapping:
        return mapping
    single, multi = "multiple_choice_single_output_format", "multiple_choice_multi_output_format"
    if single in mapping or multi in mapping:
        return mapping
    legacy = mapping[LEGACY_MC_KEY]
    return {**mapping, single: legacy, multi: legacy}


def template_forms(db_path: Path | str) -> tuple[PromptTemplates, PromptTemplates]:
    """The DB's templates as :func:`load_templates` gives them, and as written.

    As written: without the legacy key's two stand-ins, what run-layout.md hashes and stores (the
    earlier implementation's ``prompt_templates_hash`` and table). ``DatasetError`` as
    :func:`load_templates`.
    """
    features = read_features_json(db_path)
    templates, problems = templates_from_features(features)
    if templates is None:
        raise DatasetError(str(db_path), problems)
    written = json.loads(features)["prompt_reconstruction"]  # an object: validated just above
    return templates, PromptTemplates.from_mapping({key: templates[key] for key in written})


def load_templates(db_path: Path | str) -> PromptTemplates:
    """The ``prompt_reconstruction`` templates of the DB; ``DatasetError`` if absent or incomplete."""
    templates, problems = templates_from_features(read_features_json(db_path))
    if templates is None:
        raise DatasetError(str(db_path), problems)
    return templates


@dataclass(frozen=True)
class ValidationReport:
    """Outcome of validating a whole source DB: rows and templates, every problem collected."""

    table: str
    row_count: int
    questions: tuple[Question, ...]
    problems: tuple[DatasetProblem, ...]
    warnings: tuple[DatasetProblem, ...] = ()

    @property
    def ok(self) -> bool:
        """True when the DB has no problem at all."""
        return not self.problems


def validate_db(db_path: Path | str, table: str | None = None) -> ValidationReport:
    """Validate rows and templates of a DB; file/table errors still raise ``DatasetError``."""
    name, rows = read_raw_rows(db_path, table)
    questions, problems = validate_rows(rows)
    if not rows:
        problems.insert(0, _empty_table(name))
    try:
        _, template_problems = templates_from_features(read_features_json(db_path))
    except DatasetError as exc:
        template_problems = exc.problems
    warnings = duplicate_label_warnings(questions)
    if not has_metadata_table(db_path):
        warnings.insert(0, DatasetProblem(None, "features_json", f"warning: {DEFAULT_TEMPLATES_NOTE}"))
    return ValidationReport(
        name, len(rows), tuple(questions), tuple(problems + template_problems), tuple(warnings)
    )
