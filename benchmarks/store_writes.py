"""Cost of crash safety: one transaction per sample vs. one bulk transaction (same rows, same run).

Prints samples per second for ``ModelStore.write_sample`` (what the runner uses: each sample
committed on its own, so kill -9 loses at most in-flight samples) against the floor — the same
encoded rows inserted by one ``executemany`` in a single transaction — and the ratio between them,
plus the cost of the logical dump used for determinism checks.
"""

from __future__ import annotations

import sqlite3
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from oracleproto.agent.result import SampleResult
from oracleproto.dataset.models import TEMPLATE_KEYS, PromptTemplates, Question
from oracleproto.store import ModelStore, RunMeta, encode_sample, logical_dump, sample_columns
from oracleproto.store.schema import apply_pragmas, init_schema

N_QUESTIONS = 80
N_SAMPLES = 3
START = datetime(2026, 3, 1, 12, tzinfo=UTC)


def _questions() -> list[Question]:
    return [
        Question(
            f"q{i:03d}",
            "single",
            "yes_no",
            f"Fictional event {i}?",
            ("Yes", "No"),
            frozenset({"A"}),
            date(2026, 4, 1),
        )
        for i in range(N_QUESTIONS)
    ]


def _result(k: int, j: int) -> SampleResult:
    trace = [
        {"role": "user" if t % 2 else "assistant", "content": f"turn {t} " + "x" * 1500} for t in range(8)
    ]
    return SampleResult(
        final_answer_letters=("A",),
        final_answer_raw="\\boxed{A}",
        correct=True,
        parse_ok=True,
        tool_calls_count=3,
        react_steps=4,
        prompt_tokens=4000,
        completion_tokens=600,
        reasoning_tokens=0,
        latency_ms=9000,
        messages_trace=trace,
        search_calls=[{"query": f"q{k}", "n_results": 5}],
        error=None,
        created_at=START + timedelta(seconds=k * N_SAMPLES + j),
        finish_reason="stop",
        nudges_used=0,
        step_metrics=[{"step": s} for s in range(4)],
        response_id=f"r{k}-{j}",
        system_fingerprint=None,
        service_tier=None,
        belief_final=None,
        belief_trace=None,
        belief_parse_ok=None,
        final_answer_retry_used=False,
    )


def _meta() -> RunMeta:
    return RunMeta(
        run_id="20260301-120000-0a1f",
        model="bench/m::r5::c4",
        sampling_n=N_SAMPLES,
        config_snapshot={},
        filters_snapshot={},
        source_db_hash="a",
        metadata_hash="b",
        prompt_templates_hash="c",
        training_cutoff=None,
        started_at=START,
    )


def _per_sample(path: Path, slots: list[tuple[str, int, SampleResult]]) -> float:
    questions = _questions()
    templates = PromptTemplates.from_mapping({k: k for k in TEMPLATE_KEYS})
    began = time.perf_counter()
    with ModelStore.open(
        path, meta=_meta(), questions=questions, templates=templates, imported_at=START
    ) as store:
        for qid, j, result in slots:
            store.write_sample(qid, j, f"prompt {qid}", result)
    return time.perf_counter() - began


def _bulk(path: Path, slots: list[tuple[str, int, SampleResult]]) -> float:
    began = time.perf_counter()
    conn = sqlite3.connect(path, isolation_level=None)
    apply_pragmas(conn)
    init_schema(conn, N_SAMPLES, "2026-03-01T12:00:00.000000+00:00", path)
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO questions (id) VALUES (?)", [(q.id,) for q in _questions()])
    conn.executemany("INSERT OR IGNORE INTO run_results (question_id) VALUES (?)", [(s[0],) for s in slots])
    for j in range(N_SAMPLES):
        assignments = ", ".join(f"{c} = ?" for c in sample_columns(j))
        conn.executemany(
            f"UPDATE run_results SET {assignments} WHERE question_id = ?",
            [(*encode_sample(r), qid) for qid, jj, r in slots if jj == j],
        )
    conn.execute("COMMIT")
    conn.close()
    return time.perf_counter() - began


def main() -> None:
    """Print per-sample vs bulk write throughput and the logical-dump cost."""
    slots = [(f"q{k:03d}", j, _result(k, j)) for k in range(N_QUESTIONS) for j in range(N_SAMPLES)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bulk = min(_bulk(root / f"bulk{i}.db", slots) for i in range(3))
        per = min(_per_sample(root / f"per{i}.db", slots) for i in range(3))
        began = time.perf_counter()
        logical_dump(root / "per0.db")
        dump = time.perf_counter() - began
    n = len(slots)
    print(f"samples: {n} ({N_QUESTIONS} questions x {N_SAMPLES})")
    print(f"bulk single transaction (baseline): {n / bulk:10.0f} samples/s")
    print(f"one transaction per sample:         {n / per:10.0f} samples/s")
    print(f"ratio per-sample / baseline time:   {per / bulk:10.2f}x")
    print(f"logical dump of the per-sample DB:  {dump * 1000:10.1f} ms")
