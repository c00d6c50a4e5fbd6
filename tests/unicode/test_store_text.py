"""The run store takes any text a model, a page or a dataset hands it, and names a damaged cell.

A lone surrogate (a ``\\ud800`` escape in a reply) cannot be bound to SQLite as UTF-8: JSON cells
keep it as its escape (the same value), plain text cells get U+FFFD; the next sample of the same
question, whose prompt holds the same surrogate, still matches the stored prompt.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from oracleproto.agent.result import SampleResult
from oracleproto.dataset.models import TEMPLATE_KEYS, PromptTemplates, Question
from oracleproto.errors import StoreError
from oracleproto.runner.runlog import RunLog
from oracleproto.store import ModelStore, RunMeta
from oracleproto.store.codec import encode_options

LONE = "lone[\ud800|\udfff] sep[\u2028\x85] nul[\x00] bidi[\u202e] zw[\u200b\ufeff]"
WHEN = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _store(path: Path) -> ModelStore:
    question = Question(
        "q1", "single", "binary_named", f"Who wins? {LONE}", (f"Otters {LONE}", "Ravens"), frozenset({"A"}),
        date(2026, 4, 2),
    )  # fmt: skip
    meta = RunMeta(
        run_id="20260301-120000-0a1f", model="sim/careful::r5::c4", sampling_n=2,
        config_snapshot={"analysis": {"note": LONE}}, filters_snapshot={}, source_db_hash="a" * 64,
        metadata_hash="b" * 64, prompt_templates_hash="c" * 64, training_cutoff=date(2025, 6, 1),
        started_at=WHEN,
    )  # fmt: skip
    templates = PromptTemplates.from_mapping({key: f"t {key} {{event}}" for key in TEMPLATE_KEYS})
    return ModelStore.open(path, meta=meta, questions=[question], templates=templates, imported_at=WHEN)


def _result() -> SampleResult:
    return SampleResult(
        final_answer_letters=("A",), final_answer_raw=f"Note {LONE}\n\\boxed{{A}}", correct=True,
        parse_ok=True, tool_calls_count=1, react_steps=2, prompt_tokens=10, completion_tokens=5,
        reasoning_tokens=0, latency_ms=7,
        messages_trace=[{"role": "assistant", "content": LONE, "reasoning": LONE}],
        search_calls=[{"query": LONE, "end_date": "2026-03-01", "n_results": 0, "published_dates": []}],
        error=None, created_at=WHEN, finish_reason="stop", nudges_used=0, step_metrics=[],
        response_id=None, system_fingerprint=None, service_tier=None, belief_final=None,
        belief_trace=None, belief_parse_ok=None, final_answer_retry_used=False,
    )  # fmt: skip


def test_any_text_is_stored_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "model.db"
    with _store(path) as store:
        store.write_sample("q1", 0, f"prompt {LONE}", _result())
        store.write_sample("q1", 1, f"prompt {LONE}", _result())  # the same prompt: no "differs"
        back = store.read_sample("q1", 1)
        meta = store.read_meta()
    assert back is not None
    assert back.messages_trace == [{"role": "assistant", "content": LONE, "reasoning": LONE}]
    assert back.search_calls is not None and back.search_calls[0]["query"] == LONE
    shown = "lone[\ufffd|\ufffd] sep[\u2028\x85] nul[\x00] bidi[\u202e] zw[\u200b\ufeff]"
    assert back.final_answer_raw == f"Note {shown}\n\\boxed{{A}}"  # plain text: U+FFFD
    assert meta.config_snapshot == {"analysis": {"note": LONE}}
    with sqlite3.connect(path) as con:
        (options,) = con.execute("SELECT options FROM questions").fetchone()
    assert options == encode_options((f"Otters {LONE}", "Ravens")) and "\\ud800" in options


def test_a_cell_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "model.db"
    with _store(path) as store:
        store.write_sample("q1", 0, "prompt", dataclasses.replace(_result(), messages_trace=[]))
    with sqlite3.connect(path) as con:
        con.execute("UPDATE run_results SET s0_error = CAST(X'6f6bff' AS TEXT)")
    with ModelStore.open_existing(path) as store, pytest.raises(StoreError) as caught:
        store.read_sample("q1", 0)
    assert str(caught.value) == (
        f"{path}: question 'q1' sample 0, column s0_error: not UTF-8 text (byte 2); the database is "
        "damaged: restore this file from a backup or the published bundle (`oracleproto bundle import`)"
    )


def test_the_run_log_keeps_one_event_a_line(tmp_path: Path) -> None:
    class Clock:
        def now(self) -> datetime:
            return WHEN

    log = RunLog(tmp_path / "run.log", Clock())  # type: ignore[arg-type]
    log.event("search_failed", detail=LONE)
    log.close()
    data = (tmp_path / "run.log").read_bytes()
    assert len(data.decode("utf-8").splitlines()) == 1 and b"\\ud800" in data and b"\\u2028" in data
