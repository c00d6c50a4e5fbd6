"""Run directories: creation, resolution, and reading one written by the earlier implementation."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from oracleproto.agent.result import SampleResult
from oracleproto.errors import StoreError
from oracleproto.store import Manifest, ModelStore, RunDir, model_file_map, virtual_slug
from tests.earlier_layout import create_earlier_tables

RUN_ID = "20250911-080910-beef"
SLUGS = [virtual_slug("vendor-d/Model 4 (preview)", 5, 4), virtual_slug("vendor-a/m1", 5, 4)]


def legacy_db(path: Path) -> None:
    """A per-model DB as the earlier implementation wrote it, in raw SQL (n = 2)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    create_earlier_tables(conn, 2)
    conn.executescript(
        f"""
        INSERT INTO schema_version VALUES (5, '2025-09-11T08:09:10.000001+00:00');
        INSERT INTO questions VALUES ('q1', 'single', 'yes_no', 'Fictional event?', '["Yes", "No"]', 'A',
            '2025-10-01', '2025-09-11T08:09:10.000001+00:00');
        INSERT INTO questions VALUES ('q2', 'multi', 'multiple_choice', 'Fictional towns?', '["X", "Y", "Z"]',
            'A, C', '2025-10-02', '2025-09-11T08:09:10.000001+00:00');
        INSERT INTO run_meta VALUES ('{RUN_ID}', '{SLUGS[0]}', 2, '{{"MODELS": "x"}}', '{{}}',
            'aa', 'bb', 'cc',
            '2025-01-31', '2025-09-11T08:09:10.000001+00:00', NULL, NULL, NULL, NULL, NULL);
        INSERT INTO run_results (question_id, user_prompt, s0_final_answer_letters, s0_final_answer_raw,
            s0_correct, s0_parse_ok, s0_tool_calls_count, s0_react_steps, s0_prompt_tokens,
            s0_completion_tokens, s0_reasoning_tokens, s0_latency_ms, s0_search_calls, s0_created_at,
            s0_finish_reason, s0_nudges_used,
            s1_error, s1_created_at, s1_parse_ok)
        VALUES ('q2', 'prompt', '["A", "C"]', '\\boxed{{A, C}}', 1, 1, 1, 2, 100, 20, 0, 900,
            '[{{"query": "towns", "end_date": "2025-01-31", "n_results": 1,
                "published_dates": ["2025-01-02"]}}]',
            '2025-09-11T08:10:00.500000+00:00', 'stop', 0, 'rate_limit',
            '2025-09-11T08:10:01.000000+00:00', 0);
        """
    )
    conn.commit()
    conn.close()


def legacy_run(root: Path) -> Path:
    run = root / RUN_ID
    (run / "db").mkdir(parents=True)
    (run / "analysis").mkdir()
    (run / "logs").mkdir()
    files = model_file_map(SLUGS)
    for name in files.values():
        legacy_db(run / "db" / name)
    manifest = {
        "run_id": RUN_ID,
        "schema_version": 5,
        "analysis_schema": "v4",
        "sampling_n": 2,
        "models": SLUGS,
        "model_files": files,
        "model_training_cutoffs": {"vendor-d/Model 4 (preview)": "2025-01-31", "vendor-a/m1": "2024-12-01"},
        "filters": {
            "question_types": None,
            "choice_types": None,
            "question_count": 2,
            "question_ids": ["q1", "q2"],
        },
        "hashes": {"source_db": "aa", "metadata": "bb", "prompt_templates": "cc"},
        "reflection_protocol_hash": None,
        "belief_protocol_hash": None,
        "grid": {
            "r_list": [5],
            "c_list": [4],
            "default_r": 5,
            "default_c": 4,
            "real_models": ["vendor-d/Model 4 (preview)", "vendor-a/m1"],
            "n_cells": 1,
        },
        "started_at": "2025-09-11T08:09:10.000001+00:00",
        "finished_at": "2025-09-11T09:00:00.000000+00:00",
    }
    (run / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False))
    return run


def test_reads_a_run_dir_of_the_earlier_implementation(tmp_path: Path) -> None:
    path = legacy_run(tmp_path)
    db_bytes = {p.name: p.read_bytes() for p in (path / "db").iterdir()}
    run = RunDir.resolve(RUN_ID, tmp_path)
    assert run == RunDir.resolve(str(path), tmp_path / "elsewhere")
    manifest = run.load_manifest()
    assert manifest.cassettes is None and run.cassette_path(manifest) == path / "cassettes"
    dbs = run.model_db_paths(manifest)
    assert list(dbs) == SLUGS
    assert dbs[SLUGS[0]].name == "vendor-d__Model_4__preview___r5__c4.db"
    with ModelStore.open_existing(dbs[SLUGS[0]]) as store:
        meta = store.read_meta()
        assert (meta.run_id, meta.model, meta.sampling_n, meta.training_cutoff) == (
            RUN_ID,
            SLUGS[0],
            2,
            date(2025, 1, 31),
        )
        assert meta.finished_at is None and meta.config_snapshot == {"MODELS": "x"}
        sample = store.read_sample("q2", 0)
        assert sample is not None
        assert sample.final_answer_letters == ("A", "C") and sample.correct is True
        assert sample.search_calls == [
            {"query": "towns", "end_date": "2025-01-31", "n_results": 1, "published_dates": ["2025-01-02"]}
        ]
        assert sample.created_at == datetime(2025, 9, 11, 8, 10, 0, 500000, tzinfo=UTC)
        assert (
            sample.messages_trace is None and sample.step_metrics is None and sample.belief_parse_ok is None
        )
        assert store.read_sample("q2", 1) == SampleResult.empty(
            error="rate_limit", created_at=datetime(2025, 9, 11, 8, 10, 1, tzinfo=UTC)
        )
        assert store.read_sample("q1", 0) is None
        assert store.done_slots() == {("q2", 0)}
        assert store.pending_slots(["q1", "q2"], 2) == [("q1", 0), ("q1", 1), ("q2", 1)]
    # Reading never modifies the researcher's files.
    assert {p.name: p.read_bytes() for p in (path / "db").iterdir() if p.suffix == ".db"} == db_bytes


def test_resuming_a_legacy_db_keeps_its_samples(
    tmp_path: Path, make_result: Callable[..., SampleResult]
) -> None:
    path = legacy_run(tmp_path)
    db = path / "db" / "vendor-a__m1__r5__c4.db"
    with ModelStore.open_existing(db) as reader:
        meta = reader.read_meta()
    from oracleproto.dataset.models import PromptTemplates, Question

    questions = [
        Question(
            "q2",
            "multi",
            "multiple_choice",
            "Fictional towns?",
            ("X", "Y", "Z"),
            frozenset({"A", "C"}),
            date(2025, 10, 2),
        )
    ]
    with ModelStore.open(
        db,
        meta=meta,
        questions=questions,
        templates=PromptTemplates.from_mapping({}),
        imported_at=meta.started_at,
    ) as store:
        store.write_sample("q2", 1, "prompt", make_result(final_answer_letters=("A",), correct=False))
        assert store.done_slots() == {("q2", 0), ("q2", 1)}
        assert store.read_sample("q2", 0) is not None


def test_create_makes_the_layout(tmp_path: Path) -> None:
    run = RunDir.create(tmp_path / "runs", "20260301-120000-0a1f")
    assert sorted(p.name for p in run.root.iterdir()) == ["analysis", "cassettes", "db", "logs"]
    assert run.log_path == run.root / "logs" / "20260301-120000-0a1f.log"
    assert run.db_path("vendor-d/Model 4 (preview)::r5::c4").name == "vendor-d__Model_4__preview___r5__c4.db"
    assert RunDir.create(tmp_path / "runs", "20260301-120000-0a1f") == run, "re-entering resumes"


def test_run_dir_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="invalid run id 'latest'"):
        RunDir.create(tmp_path, "latest")
    with pytest.raises(
        StoreError,
        match=r"run directory not found; pass a run directory \(RUNS_ROOT/<run id>\) or a run id$",
    ):
        RunDir.resolve("20260301-120000-0a1f", tmp_path)
    run = RunDir.create(tmp_path, "20260301-120000-0a1f")
    with pytest.raises(
        StoreError, match=r"manifest.json: manifest not found; .* is not a complete run directory"
    ):
        RunDir.open(run.root)
    (run.manifest_path).write_text("{", encoding="utf-8")
    with pytest.raises(StoreError, match="not valid JSON"):
        run.load_manifest()
    other = legacy_run(tmp_path / "x")
    manifest = Manifest.load(other / "manifest.json")
    with pytest.raises(StoreError, match="does not match run directory"):
        run.write_manifest(manifest)
    run.manifest_path.write_text(manifest.to_json(), encoding="utf-8")
    with pytest.raises(StoreError, match="run_id '20250911-080910-beef' does not match the directory name"):
        run.load_manifest()
    (other / "db" / "vendor-a__m1__r5__c4.db").unlink()
    with pytest.raises(StoreError, match="database of model 'vendor-a/m1::r5::c4' is missing"):
        RunDir.open(other).model_db_paths(manifest)
