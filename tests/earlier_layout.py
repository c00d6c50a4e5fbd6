"""Run directories as the earlier implementation of the paper writes them, in raw SQL and JSON.

run-layout.md: researchers hold such directories and our reader must accept them. What marks
them (facts of that layout, not of ours): ``manifest.json`` without a trailing newline and
without our additions (``cassettes``, ``oracleproto_version``); each DB's ``run_meta`` stamped
with its own clock reading, microseconds away from the manifest's; ``config_snapshot`` the flat
settings dict keyed by environment-variable names plus the cell's ``grid_origin`` (so it
differs between model DBs); ``belief_parse_ok`` 0 with the belief protocol off; no cassettes.

``write_earlier_run`` builds a complete one over the packaged demo dataset (so its hash chain is
real), with parsed answers, a parse failure, a call error and training-cutoff exclusions, and
(optionally) the ``analysis/`` folder our ``reference-v4`` pass regenerates from it. As that
implementation is run, the dataset sits in the folder holding the runs folder, named by the
snapshot's ``SOURCE_DB`` relative to it. Its
reflection protocol text is ours, so settings that match its configuration pass the resume
identity check (which makes a refused resume a test of the layout rule alone).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

from oracleproto.agent.result import SAMPLE_FIELDS
from oracleproto.analysis import analyze_run, write_analysis
from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.hashes import metadata_hash, source_db_hash
from oracleproto.dataset.loader import load_questions, read_features_json, read_raw_rows, template_forms
from oracleproto.primitives.hashing import sha256_16
from oracleproto.prompts import prompt_templates_hash
from oracleproto.prompts.protocols import REFLECTION_PROTOCOL_TEXT
from oracleproto.store import format_timestamp, model_file_map, parse_timestamp, virtual_slug

RUN_ID = "20250911-080910-beef"
#: The earlier implementation's SOURCE_DB default, relative to the folder it is started from.
SOURCE_DB = "./forecast_eval_set.db"
N = 2
R, C = 5, 4
REAL_MODELS = ("vendor-d/Model 4 (preview)", "vendor-a/m1")
SLUGS = tuple(virtual_slug(real, R, C) for real in REAL_MODELS)
#: The second model's cutoff excludes the two demo questions ending on or before it.
CUTOFFS = {REAL_MODELS[0]: "2025-01-31", REAL_MODELS[1]: "2026-03-12"}
MANIFEST_STARTED = "2025-09-11T08:09:10.123456+00:00"
MANIFEST_FINISHED = "2025-09-11T09:00:00.654321+00:00"
#: (model index, question index in end-time order, sample) of the special trials.
CALL_ERROR = (0, 3, 1)
PARSE_FAILURE = (0, 5, 0)

INTEGER_FIELDS = frozenset(
    {
        "correct",
        "parse_ok",
        "tool_calls_count",
        "react_steps",
        "prompt_tokens",
        "completion_tokens",
        "reasoning_tokens",
        "latency_ms",
        "nudges_used",
        "belief_parse_ok",
        "final_answer_retry_used",
    }
)


def create_earlier_tables(conn: sqlite3.Connection, n: int) -> None:
    """The five tables of run-layout.md as the earlier implementation declares them (wide results)."""
    cols = ", ".join(
        f"s{i}_{f} {'INTEGER' if f in INTEGER_FIELDS else 'TEXT'}" for i in range(n) for f in SAMPLE_FIELDS
    )
    conn.executescript(
        f"""
        CREATE TABLE schema_version(version INTEGER PRIMARY KEY, applied_at TEXT);
        CREATE TABLE questions(id TEXT PRIMARY KEY, choice_type TEXT, question_type TEXT, event TEXT,
            options TEXT, answer TEXT, end_time TEXT, imported_at TEXT);
        CREATE TABLE prompt_templates(key TEXT PRIMARY KEY, value TEXT, imported_at TEXT);
        CREATE TABLE run_meta(run_id TEXT PRIMARY KEY, model TEXT, sampling_n INTEGER,
            config_snapshot TEXT, filters_snapshot TEXT, source_db_hash TEXT, metadata_hash TEXT,
            prompt_templates_hash TEXT, training_cutoff TEXT, started_at TEXT, finished_at TEXT,
            reflection_protocol_text TEXT, reflection_protocol_hash TEXT, belief_protocol_text TEXT,
            belief_protocol_hash TEXT);
        CREATE TABLE run_results(question_id TEXT PRIMARY KEY REFERENCES questions(id),
            user_prompt TEXT, {cols});
        """
    )


def flat_snapshot(real: str) -> dict[str, Any]:
    """The earlier implementation's ``config_snapshot``: its settings by variable name, plus the cell."""
    return {
        "LLM_BASE_URL": "https://api.example.test/v1",
        "LLM_API_KEY": {"provider": "llm", "prefix": "sk-e", "length": 40, "sha256_12": "0123456789ab"},
        "TAVILY_API_KEY": [
            {"provider": "tavily", "prefix": "tvly", "length": 36, "sha256_12": "ba9876543210"}
        ],
        "MODELS": list(REAL_MODELS),
        "MODEL_TRAINING_CUTOFFS": dict(CUTOFFS),
        "SAMPLING_N": N,
        "TEMPERATURE": 0.7,
        "GRID_R": R,
        "GRID_C": C,
        "REACT_MAX_STEPS": 6,
        "BELIEF_PROTOCOL": False,
        "SOURCE_DB": SOURCE_DB,
        "RUNS_ROOT": "./runs",
        "grid_origin": {"real_model": real, "R": R, "C": C, "effective_min_search_calls": 0},
    }


@dataclass(frozen=True)
class Dataset:
    """What the earlier implementation copies from the source DB into every model DB."""

    path: Path
    rows: list[dict[str, Any]]  # raw question rows, in end-time then id order
    templates: dict[str, str]
    hashes: dict[str, str]


def demo_dataset(path: Path | None = None) -> Dataset:
    """The packaged demo DB (or ``path``) with its hash chain computed as the layout defines it."""
    source = path or demo_db_path()
    _, raw = read_raw_rows(source)
    order = {q.id: i for i, q in enumerate(load_questions(source))}
    rows = sorted(raw, key=lambda r: order[str(r["id"])])
    # As the layout defines them: the dataset's template keys as written (a legacy single
    # multiple-choice key stays one key).
    _, templates = template_forms(source)
    hashes = {
        "source_db": source_db_hash(source),
        "metadata": metadata_hash(read_features_json(source)),
        "prompt_templates": prompt_templates_hash(templates),
    }
    return Dataset(source, rows, templates.as_dict(), hashes)


def _letters(answer: str) -> list[str]:
    return sorted(part.strip() for part in answer.split(","))


def _wrong(gold: list[str], k: int) -> list[str]:
    """A deterministic wrong letter set: the next letter for single answers, one letter dropped for multi."""
    if len(gold) == 1:
        return [chr(65 + (ord(gold[0]) - 64) % k)]
    return gold[1:]


def _trial(model: int, index: int, sample: int, row: dict[str, Any], at: str) -> dict[str, Any]:
    """The 24 cells of one answered trial (or its parse failure, or its call error)."""
    options = json.loads(str(row["options"]))
    gold = _letters(str(row["answer"]))
    if (model, index, sample) == CALL_ERROR:
        return {"error": "rate_limit", "created_at": at, "parse_ok": 0, **dict.fromkeys(_COUNTERS, 0)}
    searches = (index + sample) % 3
    search_calls = [
        {
            "query": f"{row['id']} angle {j}",
            "end_date": str(row["end_time"]),
            "n_results": 5,
            "published_dates": ["2025-08-01"] * 5,
        }
        for j in range(searches)
    ]
    steps = searches + 1
    cells: dict[str, Any] = {
        "tool_calls_count": searches,
        "react_steps": steps,
        "prompt_tokens": 1000 + 10 * index + sample,
        "completion_tokens": 200 + index,
        "reasoning_tokens": 50 * model,
        "latency_ms": 1500 + 100 * index + 7 * sample,
        "search_calls": json.dumps(search_calls, ensure_ascii=False),
        "created_at": at,
        "finish_reason": "stop",
        "nudges_used": 0,
        "step_metrics": json.dumps(
            [
                {
                    "step": s,
                    "prompt": 500,
                    "completion": 100,
                    "reasoning": 0,
                    "latency_ms": 700,
                    "finish_reason": "tool_calls" if s < steps - 1 else "stop",
                    "n_tool_calls": int(s < steps - 1),
                    "belief": None,
                }
                for s in range(steps)
            ]
        ),
        "response_id": f"resp-{model}-{index}-{sample}",
        "belief_parse_ok": 0,  # the earlier implementation stores 0, not NULL, with the protocol off
        "final_answer_retry_used": 0,
    }
    if (model, index, sample) == PARSE_FAILURE:
        return {**cells, "final_answer_raw": "I lean towards the second option.", "parse_ok": 0}
    letters = gold if (index + sample + model) % 3 else _wrong(gold, len(options))
    return {
        **cells,
        "final_answer_letters": json.dumps(letters),
        "final_answer_raw": "\\boxed{" + ", ".join(letters) + "}",
        "correct": int(letters == gold),
        "parse_ok": 1,
    }


_COUNTERS = (
    "tool_calls_count",
    "react_steps",
    "prompt_tokens",
    "completion_tokens",
    "reasoning_tokens",
    "latency_ms",
    "nudges_used",
    "final_answer_retry_used",
)


def write_earlier_db(path: Path, model: int, dataset: Dataset, manifest: dict[str, Any]) -> None:
    """One model's DB: questions, templates, run_meta (own timestamps, flat snapshot) and results."""
    real = REAL_MODELS[model]
    started = parse_timestamp(MANIFEST_STARTED) + timedelta(microseconds=137 * (model + 1))
    finished = parse_timestamp(MANIFEST_FINISHED) - timedelta(microseconds=211 * (model + 1))
    imported = format_timestamp(started)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    create_earlier_tables(conn, N)
    conn.execute("INSERT INTO schema_version VALUES (5, ?)", (imported,))
    conn.executemany(
        "INSERT INTO questions VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                r["id"],
                r["choice_type"],
                r["question_type"],
                r["event"],
                r["options"],
                r["answer"],
                r["end_time"],
                imported,
            )
            for r in dataset.rows
        ],
    )
    conn.executemany(
        "INSERT INTO prompt_templates VALUES (?, ?, ?)",
        [(k, v, imported) for k, v in sorted(dataset.templates.items())],
    )
    conn.execute(
        "INSERT INTO run_meta VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            RUN_ID,
            SLUGS[model],
            N,
            json.dumps(flat_snapshot(real), ensure_ascii=False, sort_keys=True),
            json.dumps(manifest["filters"], ensure_ascii=False, sort_keys=True),
            *dataset.hashes.values(),
            CUTOFFS[real],
            format_timestamp(started),
            format_timestamp(finished),
            REFLECTION_PROTOCOL_TEXT,
            manifest["reflection_protocol_hash"],
            None,
            None,
        ),
    )
    for index, row in enumerate(dataset.rows):
        excluded = str(row["end_time"]) <= CUTOFFS[real]
        prompt = None
        for sample in range(N):
            at = format_timestamp(started + timedelta(seconds=10 * index + sample, microseconds=sample))
            if excluded:
                cells = {
                    "error": "skipped_training_cutoff",
                    "created_at": at,
                    "parse_ok": 0,
                    **dict.fromkeys(_COUNTERS, 0),
                }
            else:
                cells = _trial(model, index, sample, row, at)
                if cells.get("error") is None:
                    prompt = f"Fictional event: {row['event']}"
            columns = {f"s{sample}_{name}": value for name, value in cells.items()}
            names = ", ".join(columns)
            marks = ", ".join("?" * len(columns))
            conn.execute(
                f"INSERT INTO run_results (question_id, {names}) VALUES (?, {marks}) "
                f"ON CONFLICT(question_id) DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in columns),
                (row["id"], *columns.values()),
            )
        # The earlier writer keeps the first prompt it is given (COALESCE); error rows give none.
        conn.execute("UPDATE run_results SET user_prompt = ? WHERE question_id = ?", (prompt, row["id"]))
    conn.commit()
    conn.close()


def earlier_manifest(dataset: Dataset) -> dict[str, Any]:
    """The manifest keys of run-layout.md, as the earlier implementation fills them."""
    return {
        "run_id": RUN_ID,
        "schema_version": 5,
        "analysis_schema": "v4",
        "sampling_n": N,
        "models": list(SLUGS),
        "model_files": model_file_map(SLUGS),
        "model_training_cutoffs": dict(CUTOFFS),
        "filters": {
            "question_types": None,
            "choice_types": None,
            "question_count": len(dataset.rows),
            "question_ids": [str(r["id"]) for r in dataset.rows],
        },
        "hashes": dict(dataset.hashes),
        "reflection_protocol_hash": sha256_16(REFLECTION_PROTOCOL_TEXT),
        "belief_protocol_hash": None,
        "grid": {
            "r_list": [R],
            "c_list": [C],
            "default_r": R,
            "default_c": C,
            "real_models": list(REAL_MODELS),
            "n_cells": 1,
        },
        "started_at": MANIFEST_STARTED,
        "finished_at": MANIFEST_FINISHED,
    }


def write_earlier_run(
    runs_root: Path, *, analysis: bool = True, questions: int | None = None, source: Path | None = None
) -> Path:
    """``runs_root/RUN_ID``: a finished earlier-implementation run over the demo dataset (or ``source``).

    A copy of the dataset goes to ``runs_root.parent`` as the snapshot's ``SOURCE_DB`` names it.
    ``questions``: seed only the first that many questions (in end-time order), for a run small
    enough to work out its analysis by hand.
    """
    run = runs_root / RUN_ID
    for sub in ("db", "analysis", "logs"):
        (run / sub).mkdir(parents=True)
    dataset = demo_dataset(source)
    if questions is not None:
        dataset = replace(dataset, rows=dataset.rows[:questions])
    (runs_root.parent / SOURCE_DB).write_bytes(dataset.path.read_bytes())
    manifest = earlier_manifest(dataset)
    # That implementation writes the manifest with json.dumps and no trailing newline.
    (run / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2, sort_keys=True), encoding="utf-8"
    )
    for model, name in enumerate(manifest["model_files"].values()):
        write_earlier_db(run / "db" / name, model, dataset, manifest)
    (run / "logs" / f"{RUN_ID}.log").write_text("08:09:10 | INFO | run started\n", encoding="utf-8")
    if analysis:
        write_analysis(analyze_run(run, "reference-v4"), run / "analysis")
    return run
