"""The hash chain: dataset → manifest → every DB's run_meta, questions and templates.

Each link is recomputed from what is on disk and compared with what the run recorded, so a
changed dataset, template, manifest value or run_meta cell shows up with the link it broke.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

from oracleproto.dataset.hashes import metadata_hash, source_db_hash
from oracleproto.dataset.loader import load_questions, read_features_json, template_forms
from oracleproto.dataset.models import PromptTemplates
from oracleproto.errors import OracleprotoError
from oracleproto.primitives.sqlite_readonly import connect_readonly
from oracleproto.prompts import prompt_templates_hash
from oracleproto.prompts.render import templates_as_recorded
from oracleproto.store import (
    Manifest,
    ModelStore,
    RunMeta,
    format_timestamp,
    parse_timestamp,
    parse_virtual_slug,
)
from oracleproto.store.codec import encode_options
from oracleproto.store.naming import model_file_name, virtual_slug
from oracleproto.verify.findings import Check, failed, passed

QuestionRow = tuple[str, str, str, str, str, str]


def _ro(path: Path) -> sqlite3.Connection:
    return connect_readonly(path)


def _table(path: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = _ro(path)
    try:
        return list(conn.execute(sql).fetchall())
    finally:
        conn.close()


def _times(meta: RunMeta, manifest: Manifest) -> dict[str, tuple[object, object]]:
    """started_at/finished_at pairs: exact for our runs, "finished or not" for the earlier layout.

    The earlier implementation stamps the manifest and each DB with separate clock readings, so
    its times differ by microseconds (more on a resumed run); they are no link of the hash chain.
    """
    db = (
        format_timestamp(meta.started_at),
        None if meta.finished_at is None else format_timestamp(meta.finished_at),
    )
    if not manifest.earlier_implementation:
        return {"started_at": (db[0], manifest.started_at), "finished_at": (db[1], manifest.finished_at)}
    state = {True: "set (finished)", False: "null (unfinished)"}
    return {"finished_at": (state[db[1] is not None], state[manifest.finished_at is not None])}


def time_offset(meta: RunMeta, manifest: Manifest) -> float:
    """The largest distance in seconds between the DB's and the manifest's start and finish times."""
    offsets = [abs((meta.started_at - parse_timestamp(manifest.started_at)).total_seconds())]
    if meta.finished_at is not None and manifest.finished_at is not None:
        offsets.append(abs((meta.finished_at - parse_timestamp(manifest.finished_at)).total_seconds()))
    return max(offsets)


def _meta_mismatches(meta: RunMeta, slug: str, manifest: Manifest) -> list[str]:
    """run_meta column → (db value, manifest value) wherever they disagree."""
    real = parse_virtual_slug(slug)[0]
    cutoff = None if meta.training_cutoff is None else meta.training_cutoff.isoformat()
    pairs: dict[str, tuple[object, object]] = {
        "run_id": (meta.run_id, manifest.run_id),
        "model": (meta.model, slug),
        "sampling_n": (meta.sampling_n, manifest.sampling_n),
        "source_db_hash": (meta.source_db_hash, manifest.hashes.source_db),
        "metadata_hash": (meta.metadata_hash, manifest.hashes.metadata),
        "prompt_templates_hash": (meta.prompt_templates_hash, manifest.hashes.prompt_templates),
        "training_cutoff": (cutoff, manifest.model_training_cutoffs.get(real)),
        "reflection_protocol_hash": (meta.reflection_protocol_hash, manifest.reflection_protocol_hash),
        "belief_protocol_hash": (meta.belief_protocol_hash, manifest.belief_protocol_hash),
        "filters_snapshot": (meta.filters_snapshot, manifest.filters.model_dump(mode="json")),
        **_times(meta, manifest),
    }
    return [
        f"run_meta.{name} is {db!r:.80} but manifest.json says {mf!r:.80}"
        for name, (db, mf) in pairs.items()
        if db != mf
    ]


def check_database(
    path: Path, label: str, slug: str, manifest: Manifest
) -> tuple[list[Check], RunMeta | None]:
    """SQLite integrity, run_meta against the manifest, the stored templates against their hash."""
    checks: list[Check] = []
    try:
        problems = [str(r[0]) for r in _table(path, "PRAGMA integrity_check")]
        with ModelStore.open_existing(path) as store:
            meta = store.read_meta()
    except (sqlite3.DatabaseError, OracleprotoError) as exc:
        return [failed(f"{label} sqlite", f"{label}: not a readable run database ({exc})")], None
    if problems != ["ok"]:
        checks.append(
            failed(f"{label} sqlite", f"{label}: PRAGMA integrity_check: {'; '.join(problems[:5])}")
        )
    else:
        checks.append(passed(f"{label} sqlite", "integrity_check ok"))
    mismatches = _meta_mismatches(meta, slug, manifest)
    what = f"{label} run_meta ↔ manifest"
    note = (
        f"times within {time_offset(meta, manifest):.6f} s of the manifest's (the earlier implementation "
        "stamps each file with its own clock reading)"
        if manifest.earlier_implementation
        else ""
    )
    checks.append(failed(what, f"{label}: " + "; ".join(mismatches)) if mismatches else passed(what, note))
    what = f"{label} prompt_templates ↔ run_meta"
    try:  # a damaged run is reported, never raised: a text cell that is not UTF-8 fails the read
        stored = dict(_table(path, "SELECT key, value FROM prompt_templates"))
        digest = prompt_templates_hash(
            PromptTemplates.from_mapping({str(k): str(v) for k, v in stored.items()})
        )
    except (OracleprotoError, ValueError, KeyError, sqlite3.DatabaseError) as exc:
        checks.append(failed(what, f"{label}: table prompt_templates is not a valid template set ({exc})"))
    else:
        checks.append(
            passed(what)
            if digest == meta.prompt_templates_hash
            else failed(
                what,
                f"{label}: table prompt_templates hashes to {digest[:16]}… but "
                f"run_meta.prompt_templates_hash is {meta.prompt_templates_hash[:16]}…",
            )
        )
    checks.append(_questions_check(path, label, manifest))
    return checks, meta


def _questions_check(path: Path, label: str, manifest: Manifest) -> Check:
    """The DB's questions are the manifest's, which lists them by end_time, then id (run-layout.md)."""
    what = f"{label} questions ↔ manifest filters"
    try:
        rows = [(str(r[1]), str(r[0])) for r in _table(path, "SELECT id, end_time FROM questions")]
    except sqlite3.DatabaseError as exc:
        return failed(what, f"{label}: table questions cannot be read ({exc})")
    listed = list(manifest.filters.question_ids)
    if sorted(qid for _, qid in rows) != sorted(listed):
        differ = sorted({qid for _, qid in rows} ^ set(listed))
        return failed(what, f"{label}: table questions holds ids {differ} unlike the manifest")
    if [qid for _, qid in sorted(rows)] != listed:
        return failed(
            what,
            f"{label}: manifest.json filters.question_ids is not ordered by end_time, then id, as "
            "the questions table dates them",
        )
    return passed(what)


def check_file_names(manifest: Manifest) -> Check:
    """Each model file is named from its virtual slug by the layout's rule (run-layout.md)."""
    wrong = [
        f"{slug!r} → {name!r} (the rule gives {model_file_name(slug)!r})"
        for slug, name in manifest.model_files.items()
        if name != model_file_name(slug)
    ]
    what = "manifest.json model_files ↔ naming rule"
    if wrong:
        return failed(what, "; ".join(wrong[:5]) + "; a reader of the layout looks for the rule's name")
    return passed(what, f"{len(manifest.model_files)} file names")


def check_grid(manifest: Manifest) -> Check:
    """``models`` are the grid's cells: each a virtual slug of a listed real model, R and C, every real
    model present, no slug twice, the default cell in the lists (run-layout.md: every run is a grid).

    A run oracleproto wrote lists them in plan order, real models × R × C, and counts them in
    ``n_cells``; the earlier layout states neither its order nor that count, so for its runs the set
    is checked.
    """
    grid = manifest.grid
    problems: list[str] = []
    cells: set[tuple[str, int, int]] = set()
    for slug in manifest.models:
        try:
            cell = parse_virtual_slug(slug)
        except OracleprotoError:
            problems.append(f"{slug!r} is not a grid cell's slug ('{{real}}::r{{R}}::c{{C}}')")
            continue
        real, r, c = cell
        if real not in grid.real_models or r not in grid.r_list or c not in grid.c_list:
            problems.append(f"{slug!r} is not a cell of the grid (real_models × r_list × c_list)")
        cells.add(cell)
    problems += [f"{m!r} is listed twice" for m, n in sorted(Counter(manifest.models).items()) if n > 1]
    reals = {c[0] for c in cells}
    problems += [f"real model {m!r} has no cell in models" for m in grid.real_models if m not in reals]
    if grid.default_r not in grid.r_list or grid.default_c not in grid.c_list:
        problems.append(f"the default cell r{grid.default_r} c{grid.default_c} is not in r_list × c_list")
    if not problems and not manifest.earlier_implementation:
        planned = [virtual_slug(m, r, c) for m in grid.real_models for r in grid.r_list for c in grid.c_list]
        if manifest.models != planned:
            problems.append(f"models are not the plan order of the grid's cells: {planned}")
        elif grid.n_cells != len(planned):
            # The paper's grid cell is a virtual slug; the earlier layout does not state its count.
            problems.append(f"n_cells is {grid.n_cells}, the grid has {len(planned)} cell(s)")
    what = "manifest.json grid ↔ models"
    if problems:
        return failed(what, "; ".join(problems[:5]))
    return passed(what, f"{len(manifest.models)} cell(s) of {len(grid.real_models)} model(s)")


def check_snapshots_agree(metas: dict[str, RunMeta]) -> Check:
    """Every DB of one run must carry the same config snapshot."""
    labels = list(metas)
    first = metas[labels[0]].config_snapshot
    for label in labels[1:]:
        if metas[label].config_snapshot != first:
            return failed(
                "config_snapshot agreement",
                f"{label}: run_meta.config_snapshot differs from the one in {labels[0]}",
            )
    return passed("config_snapshot agreement", f"{len(labels)} databases")


def find_dataset(expected: str, candidates: list[Path]) -> Path | None:
    """The first candidate whose file sha256 is ``expected``."""
    for path in candidates:
        if path.is_file() and source_db_hash(path) == expected:
            return path
    return None


def _question_rows(path: Path) -> dict[str, QuestionRow]:
    rows = _table(
        path, "SELECT id, choice_type, question_type, event, options, answer, end_time FROM questions"
    )
    return {str(r[0]): tuple(str(v) for v in r[1:]) for r in rows}  # type: ignore[misc]


_QUESTION_COLUMNS = ("choice_type", "question_type", "event", "options", "answer", "end_time")


def _recorded_templates(dataset: Path, recorded: str) -> PromptTemplates:
    """The dataset's templates in the form the run hashed them.

    For a dataset with the legacy single multiple-choice key, run-layout.md (and the earlier
    implementation) hash and store its keys as written, and so does oracleproto now; runs it
    recorded before hold the two stand-in keys it renders from. Either form is this dataset's.
    """
    return templates_as_recorded(*template_forms(dataset), recorded)


def check_dataset(dataset: Path, manifest: Manifest, dbs: dict[str, Path]) -> list[Check]:
    """Recompute the dataset links (source, metadata, templates) and compare the seeded questions."""
    checks: list[Check] = []
    hashes = manifest.hashes
    actual_source = source_db_hash(dataset)
    actual_meta = metadata_hash(read_features_json(dataset))
    templates = _recorded_templates(dataset, hashes.prompt_templates)
    actual_templates = prompt_templates_hash(templates)
    for name, recorded, actual in (
        ("source_db", hashes.source_db, actual_source),
        ("metadata", hashes.metadata, actual_meta),
        ("prompt_templates", hashes.prompt_templates, actual_templates),
    ):
        what = f"dataset {name} hash"
        checks.append(
            passed(what, actual[:16] + "…")
            if recorded == actual
            else failed(what, f"manifest.json hashes.{name} is {recorded}, {dataset.name} gives {actual}")
        )
    expected: dict[str, QuestionRow] = {
        q.id: (
            q.choice_type,
            q.question_type,
            q.event,
            encode_options(q.options),
            q.answer_text,
            q.end_time.isoformat(),
        )
        for q in load_questions(dataset)
    }
    for label, path in dbs.items():
        what = f"{label} questions ↔ dataset"
        problems: list[str] = []
        for qid, row in sorted(_question_rows(path).items()):
            want = expected.get(qid)
            if want is None:
                problems.append(f"row id={qid!r} is not in the dataset")
                continue
            problems += [
                f"row id={qid!r} column {col!r} differs from the dataset"
                for col, got, ref in zip(_QUESTION_COLUMNS, row, want, strict=True)
                if got != ref
            ]
        templates_stored = dict(_table(path, "SELECT key, value FROM prompt_templates"))
        problems += [
            f"table prompt_templates row key={key!r} column 'value' differs from the dataset"
            for key, value in sorted(templates.as_dict().items())
            if templates_stored.get(key) != value
        ]
        checks.append(failed(what, f"{label}: " + "; ".join(problems[:5])) if problems else passed(what))
    return checks
