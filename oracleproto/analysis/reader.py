"""Read a run directory (run-layout.md) straight from SQLite into trial tables.

Reads only: no import of the store or runner, so runs written by the earlier implementation
of the paper load the same way as ours.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from oracleproto.analysis.billing import ModelBilling, json_cell, model_billing
from oracleproto.analysis.trials import BINARY, MC_MULTI, MC_SINGLE, YES_NO, TrialState, TrialTable
from oracleproto.errors import AnalysisError
from oracleproto.primitives.paths import confined
from oracleproto.primitives.sqlite_readonly import connect_readonly
from oracleproto.primitives.sqlite_text import (
    damaged_cell_message,
    is_decode_error,
    text_of,
    undecodable_cells,
)

SKIPPED_TRAINING_CUTOFF = "skipped_training_cutoff"
#: δ = 0's exclusion (χ ≥ τ): excluded from every metric exactly like a training-cutoff skip.
SKIPPED_AFTER_RESOLUTION = "skipped_after_resolution"
EXCLUSION_ERRORS = (SKIPPED_TRAINING_CUTOFF, SKIPPED_AFTER_RESOLUTION)
VIRTUAL_SLUG = re.compile(r"^(.+?)::r(\d+)::c(\d+)$")
MAX_LETTERS = 26

#: Per-sample columns the analysis cannot work without.
REQUIRED_FIELDS: tuple[str, ...] = (
    "final_answer_letters",
    "parse_ok",
    "tool_calls_count",
    "react_steps",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "search_calls",
    "error",
    "created_at",
)
#: Columns added in later schema versions: absent means NULL.
OPTIONAL_FIELDS: tuple[str, ...] = (
    "reasoning_tokens",
    "belief_final",
    "belief_trace",
    "belief_parse_ok",
    "step_metrics",
)
QUESTION_COLUMNS: tuple[str, ...] = ("id", "choice_type", "question_type", "options", "answer")
#: Manifest ``schema_version`` values this reader understands (run-layout.md; store/manifest.py writes 5).
SUPPORTED_SCHEMA_VERSIONS: tuple[int, ...] = (1, 2, 3, 4, 5)


class ManifestView(BaseModel):
    """The manifest keys the analysis uses, validated before use; other keys are kept as they are."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)

    schema_version: int = Field(default=SUPPORTED_SCHEMA_VERSIONS[-1], description="Per-model DB schema.")
    sampling_n: int | None = Field(default=None, ge=0, description="Samples per (question, model).")
    models: list[str] = Field(description="Virtual slugs in plan order.")
    model_files: dict[str, str] = Field(description="Virtual slug -> DB file name under db/.")


def _validate_manifest(manifest_path: Path, manifest: dict[str, Any]) -> ManifestView:
    try:
        view = ManifestView.model_validate(manifest)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
        )
        raise AnalysisError(f"{manifest_path}: not a valid run manifest (run-layout.md): {problems}") from exc
    if view.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
        supported = ", ".join(str(v) for v in SUPPORTED_SCHEMA_VERSIONS)
        raise AnalysisError(
            f"{manifest_path}: schema_version {view.schema_version} is not one this oracleproto reads "
            f"(supported: {supported}); upgrade oracleproto or fix the manifest"
        )
    return view


@dataclass(frozen=True)
class ModelRun:
    """One virtual model slug of a run: its metadata row and its trials."""

    slug: str
    file: str
    run_meta: dict[str, Any]
    table: TrialTable
    #: Every question of the DB's ``questions`` table: id → (question_type, choice_type) (Table 1).
    question_kinds: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: Exclusion ``error`` value → ids of the questions with a slot excluded for it (Table 2).
    exclusions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: What the model's calls were billed for (step_metrics, search_calls): the cost's input.
    billing: ModelBilling = field(default_factory=ModelBilling)

    @property
    def real_slug(self) -> str:
        """The real model slug (the grid suffix ``::rR::cC`` removed)."""
        match = VIRTUAL_SLUG.match(self.slug)
        return match.group(1) if match else self.slug


@dataclass(frozen=True)
class RunData:
    """A whole run directory as read from disk."""

    run_dir: Path
    manifest: dict[str, Any]
    models: tuple[ModelRun, ...]

    @property
    def run_id(self) -> str:
        """The run id from the manifest."""
        return str(self.manifest.get("run_id", self.run_dir.name))


def read_run(run_dir: Path, *, decode_text: Callable[[bytes], str] | None = None) -> RunData:
    """Read ``manifest.json`` and every per-model database of a run directory.

    ``decode_text`` reads TEXT cells (default: strict UTF-8, so a damaged cell is an error); the
    viewer passes a lenient one, since it shows such a cell rather than refuse the run.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise AnalysisError(
            f"run directory {run_dir} does not exist: pass the directory holding manifest.json"
        )
    manifest_path = run_dir / "manifest.json"
    if not manifest_path.is_file():
        raise AnalysisError(f"{manifest_path} is missing: {run_dir} is not a run directory (run-layout.md)")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise AnalysisError(f"{manifest_path} is not valid JSON: {exc}") from exc
    if not isinstance(manifest, dict):
        raise AnalysisError(f"{manifest_path} must hold a JSON object")
    model_files = manifest.get("model_files")
    models = manifest.get("models")
    if not isinstance(model_files, dict) or not isinstance(models, list):
        raise AnalysisError(f"{manifest_path}: keys 'models' (list) and 'model_files' (object) are required")
    view = _validate_manifest(manifest_path, manifest)
    runs: list[ModelRun] = []
    for slug in view.models:
        file = view.model_files.get(slug)
        if file is None:
            raise AnalysisError(f"{manifest_path}: model {slug!r} has no entry in 'model_files'")
        db_path = confined(
            run_dir / "db", file, what=f"{manifest_path}: model_files[{slug!r}]", error=AnalysisError
        )
        if not db_path.is_file():
            raise AnalysisError(
                f"{db_path} is missing: manifest.json lists model {slug!r} but its database is absent"
            )
        runs.append(_read_model(db_path, slug, view.sampling_n or 0, decode_text))
    if not runs:
        raise AnalysisError(f"{manifest_path}: the run lists no models")
    return RunData(run_dir=run_dir, manifest=manifest, models=tuple(runs))


def _read_model(
    db_path: Path, slug: str, manifest_n: int, decode_text: Callable[[bytes], str] | None = None
) -> ModelRun:
    # Read-only URI: the analysis must never create WAL files or alter a published run.
    try:
        con = connect_readonly(db_path)
    except sqlite3.Error as exc:
        raise AnalysisError(f"{db_path}: cannot open SQLite database: {exc}") from exc
    try:
        con.row_factory = sqlite3.Row
        if decode_text is not None:
            con.text_factory = decode_text
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")}
        for needed in ("run_meta", "questions", "run_results"):
            if needed not in tables:
                raise AnalysisError(
                    f"{db_path}: table {needed!r} is missing (run-layout.md 'Per-model SQLite')"
                )
        meta_rows = con.execute("SELECT * FROM run_meta").fetchall()
        if len(meta_rows) != 1:
            raise AnalysisError(f"{db_path}: run_meta must hold exactly one row, found {len(meta_rows)}")
        run_meta = dict(meta_rows[0])
        n = int(run_meta.get("sampling_n") or manifest_n)
        if n < 1:
            raise AnalysisError(f"{db_path}: run_meta.sampling_n must be >= 1")
        _check_columns(con, db_path, "questions", QUESTION_COLUMNS)
        wanted = ["question_id"] + [f"s{i}_{f}" for i in range(n) for f in REQUIRED_FIELDS]
        present = _check_columns(con, db_path, "run_results", tuple(wanted))
        questions = {r["id"]: dict(r) for r in con.execute("SELECT * FROM questions")}
        columns = wanted + [f"s{i}_{f}" for i in range(n) for f in OPTIONAL_FIELDS if f"s{i}_{f}" in present]
        sql = "SELECT " + ", ".join(f'"{c}"' for c in columns) + " FROM run_results ORDER BY question_id"
        rows = [dict(r) for r in con.execute(sql)]
    except sqlite3.Error as exc:
        if is_decode_error(exc):
            raise AnalysisError(_damaged_cell(con, db_path)) from None
        raise AnalysisError(f"{db_path}: cannot read: {exc}") from exc
    finally:
        con.close()
    return ModelRun(
        slug=slug,
        file=db_path.name,
        run_meta=run_meta,
        table=_build(db_path, rows, questions, n),
        question_kinds={
            str(q["id"]): (str(q["question_type"]), str(q["choice_type"])) for q in questions.values()
        },
        exclusions=_exclusions(rows, n),
        billing=model_billing(db_path, rows, n, run_meta, EXCLUSION_ERRORS),
    )


def _damaged_cell(con: sqlite3.Connection, db_path: Path) -> str:
    """Which TEXT cell is not UTF-8 (a damaged DB), named by its table and row, and what to do."""
    for table, key in (("run_meta", "run_id"), ("questions", "id"), ("run_results", "question_id")):
        cells = undecodable_cells(con, f'SELECT "{key}", * FROM "{table}"')
        if cells:
            row, column, offset = cells[0]
            return damaged_cell_message(
                f"{db_path}: table {table}, {key} {text_of(row[0])!r}", column, offset
            )
    return f"{db_path}: a TEXT cell is not UTF-8; the database is damaged: restore it from a backup"


def _exclusions(rows: list[dict[str, Any]], n: int) -> dict[str, tuple[str, ...]]:
    """Per exclusion reason, the questions having a written slot excluded for it."""
    found: dict[str, set[str]] = {}
    for row in rows:
        for j in range(n):
            error = row[f"s{j}_error"]
            if row[f"s{j}_created_at"] is not None and error in EXCLUSION_ERRORS:
                found.setdefault(str(error), set()).add(str(row["question_id"]))
    return {reason: tuple(sorted(ids)) for reason, ids in sorted(found.items())}


def _check_columns(con: sqlite3.Connection, db_path: Path, table: str, wanted: tuple[str, ...]) -> set[str]:
    present = {r[1] for r in con.execute(f'PRAGMA table_info("{table}")')}
    missing = [c for c in wanted if c not in present]
    if missing:
        shown = ", ".join(missing[:8]) + (" …" if len(missing) > 8 else "")
        raise AnalysisError(
            f"{db_path}: table {table!r} lacks {len(missing)} required column(s): {shown} "
            "(see run-layout.md; sampling_n in run_meta must match the s{i}_ columns)"
        )
    return present


def _bucket(db_path: Path, q: dict[str, Any]) -> int:
    qtype, ctype = q["question_type"], q["choice_type"]
    if qtype == "yes_no":
        return YES_NO
    if qtype == "binary_named":
        return BINARY
    if qtype == "multiple_choice" and ctype in ("single", "multi"):
        return MC_MULTI if ctype == "multi" else MC_SINGLE
    raise AnalysisError(
        f"{db_path}: question {q['id']!r} has question_type={qtype!r}, choice_type={ctype!r}; expected "
        "yes_no | binary_named | multiple_choice with choice_type single | multi"
    )


def _letters(db_path: Path, where: str, raw: str, k: int) -> list[int]:
    items = [s.strip() for s in raw.split(",")] if not raw.lstrip().startswith("[") else json.loads(raw)
    out: list[int] = []
    for item in items:
        if not isinstance(item, str) or len(item) != 1 or not ("A" <= item <= "Z"):
            raise AnalysisError(f"{db_path}: {where}: {item!r} is not a letter A-Z")
        idx = ord(item) - ord("A")
        if idx >= k:
            raise AnalysisError(f"{db_path}: {where}: letter {item!r} is outside the {k} options")
        out.append(idx)
    return out


def _build(
    db_path: Path, rows: list[dict[str, Any]], questions: dict[str, dict[str, Any]], n: int
) -> TrialTable:
    q_count = len(rows)
    ks: list[int] = []
    for row in rows:
        q = questions.get(row["question_id"])
        if q is None:
            raise AnalysisError(f"{db_path}: run_results row {row['question_id']!r} has no questions row")
        try:
            options = json.loads(q["options"])
        except (TypeError, json.JSONDecodeError) as exc:
            raise AnalysisError(f"{db_path}: question {q['id']!r}: options is not a JSON array") from exc
        if not isinstance(options, list) or not 2 <= len(options) <= MAX_LETTERS:
            raise AnalysisError(
                f"{db_path}: question {q['id']!r}: options must be a JSON array of 2..26 items"
            )
        ks.append(len(options))
    width = max(ks, default=2)
    bucket = np.zeros(q_count, dtype=np.int64)
    gold = np.zeros((q_count, width), dtype=bool)
    state = np.zeros((q_count, n), dtype=np.int64)
    pred = np.zeros((q_count, n, width), dtype=bool)
    ints = {name: np.zeros((q_count, n), dtype=np.int64) for name in _INT_FIELDS}
    search = np.zeros((q_count, n), dtype=np.int64)
    detector = np.zeros((q_count, n), dtype=np.int64)
    beliefs: list[tuple[Any, ...]] = []
    traces: list[tuple[Any, ...]] = []
    errors: list[tuple[str | None, ...]] = []
    for qi, row in enumerate(rows):
        q = questions[row["question_id"]]
        bucket[qi] = _bucket(db_path, q)
        gold[qi, _letters(db_path, f"question {q['id']!r} answer", str(q["answer"] or ""), ks[qi])] = True
        b_row: list[Any] = []
        t_row: list[Any] = []
        for j in range(n):
            where = f"question {q['id']!r} sample {j}"
            state[qi, j], letters = _state(db_path, where, row, j, ks[qi])
            pred[qi, j, letters] = True
            for name, col in _INT_FIELDS.items():
                ints[name][qi, j] = int(row.get(f"s{j}_{col}") or 0)
            calls = json_cell(db_path, f"{where} search_calls", row[f"s{j}_search_calls"]) or []
            search[qi, j] = sum(1 for c in calls if isinstance(c, dict) and not c.get("error_kind"))
            detector[qi, j] = sum(len(c.get("detector_verdicts") or []) for c in calls if isinstance(c, dict))
            ok = row.get(f"s{j}_belief_parse_ok")
            b_row.append(
                json_cell(db_path, f"{where} belief_final", row.get(f"s{j}_belief_final"))
                if ok in (None, 1)
                else None
            )
            t_row.append(json_cell(db_path, f"{where} belief_trace", row.get(f"s{j}_belief_trace")))
        beliefs.append(tuple(b_row))
        traces.append(tuple(t_row))
        call_error = state[qi] == TrialState.CALL_ERROR
        errors.append(tuple(str(row[f"s{j}_error"]) if call_error[j] else None for j in range(n)))
    return TrialTable(
        question_ids=tuple(str(r["question_id"]) for r in rows),
        bucket=bucket,
        question_type=tuple(str(questions[r["question_id"]]["question_type"]) for r in rows),
        k=np.asarray(ks, dtype=np.int64),
        gold=gold,
        state=state,
        pred=pred,
        search_calls=search,
        detector_calls=detector,
        belief_final=tuple(beliefs),
        belief_trace=tuple(traces),
        error_kind=tuple(errors),
        **ints,
    )


_INT_FIELDS: dict[str, str] = {
    "prompt_tokens": "prompt_tokens",
    "completion_tokens": "completion_tokens",
    "reasoning_tokens": "reasoning_tokens",
    "tool_calls": "tool_calls_count",
    "react_steps": "react_steps",
    "latency_ms": "latency_ms",
}


def _state(db_path: Path, where: str, row: dict[str, Any], j: int, k: int) -> tuple[int, list[int]]:
    if row[f"s{j}_created_at"] is None:
        return TrialState.EMPTY, []
    error = row[f"s{j}_error"]
    if error in EXCLUSION_ERRORS:
        return TrialState.EXCLUDED, []
    if error:
        return TrialState.CALL_ERROR, []
    raw = row[f"s{j}_final_answer_letters"]
    if not row[f"s{j}_parse_ok"]:
        return TrialState.PARSE_FAIL, []
    if raw is None:
        raise AnalysisError(f"{db_path}: {where}: parse_ok is 1 but final_answer_letters is NULL")
    letters = _letters(db_path, f"{where} final_answer_letters", str(raw), k)
    if not letters:
        raise AnalysisError(f"{db_path}: {where}: parse_ok is 1 but the letter set is empty")
    return TrialState.PARSED, letters
