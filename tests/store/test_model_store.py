"""ModelStore: seeding, per-sample writes, reads, the resume rule and resume safety."""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from oracleproto.agent.result import SampleResult
from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import StoreError
from oracleproto.store import ModelStore, RunMeta
from oracleproto.store.schema import PAGE_CACHE_SIZE

ResultFactory = Callable[..., SampleResult]
StoreFactory = Callable[..., ModelStore]
STARTED = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)  # the meta fixture's started_at
LATER = datetime(2026, 3, 1, 13, 0, tzinfo=UTC)


def test_seeding_writes_questions_templates_and_meta(
    tmp_path: Path,
    store_factory: StoreFactory,
    meta: RunMeta,
    questions: list[Question],
    templates: PromptTemplates,
) -> None:
    path = tmp_path / "m.db"
    with store_factory(path) as store:
        assert store.read_meta() == meta
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT * FROM questions ORDER BY id").fetchall()
    assert rows[0] == (
        "q-multi",
        "multi",
        "multiple_choice",
        questions[2].event,
        '["Aldmoor", "Brisk", "Corvin", "Dunmere"]',
        "A, C",
        "2026-04-03",
        "2026-03-01T12:00:00.123456+00:00",
    )
    assert len(rows) == 3
    assert dict(conn.execute("SELECT key, value FROM prompt_templates")) == templates.as_dict()
    meta_row = conn.execute(
        "SELECT config_snapshot, training_cutoff, started_at, finished_at FROM run_meta"
    ).fetchall()
    assert meta_row == [
        (
            '{"llm":{"api_key":"sk-a…0123456789ab","temperature":0.7}}',
            "2025-06-01",
            "2026-03-01T12:00:00.123456+00:00",
            None,
        )
    ]
    conn.close()


def test_write_read_round_trip_and_finish(store_factory: StoreFactory, make_result: ResultFactory) -> None:
    store = store_factory()
    ok = make_result(final_answer_letters=("A", "C"))
    skipped = SampleResult.skipped(STARTED)
    store.write_sample("q-multi", 1, "prompt multi", ok)
    store.write_sample("q-yes", 0, "prompt yes", skipped)
    assert store.read_sample("q-multi", 1) == ok
    assert store.read_sample("q-multi", 0) is None
    assert store.read_sample("q-named", 0) is None
    assert store.read_sample("q-yes", 0) == skipped
    assert store.read_user_prompt("q-multi") == "prompt multi"
    store.finish(LATER)
    assert store.read_meta().finished_at == LATER
    store.close()


@pytest.mark.parametrize(
    ("error", "written", "done"),
    [
        (None, True, True),
        ("skipped_training_cutoff", True, True),
        ("skipped_after_resolution", True, True),
        ("network", True, False),
        ("rate_limit", True, False),
        ("server_5xx", True, False),
        ("content_policy", True, False),
        ("bad_request", True, False),
        ("unknown", True, False),
        (None, False, False),
    ],
)
def test_resume_rule_truth_table(
    store_factory: StoreFactory, make_result: ResultFactory, error: str | None, written: bool, done: bool
) -> None:
    store = store_factory()
    if written:
        result = make_result() if error is None else SampleResult.empty(error=error, created_at=STARTED)
        store.write_sample("q-yes", 1, "p", result)
    assert (("q-yes", 1) in store.done_slots()) is done
    expected_pending = [("q-yes", 0)] + ([] if done else [("q-yes", 1)]) + [("q-named", 0), ("q-named", 1)]
    assert store.pending_slots(["q-yes", "q-named"], 2) == expected_pending
    store.close()


def test_resume_rule_on_raw_rows_with_null_created_at(tmp_path: Path, store_factory: StoreFactory) -> None:
    path = tmp_path / "m.db"
    store_factory(path).close()
    conn = sqlite3.connect(path)
    # error NULL but created_at NULL: never finished, so not done.
    conn.execute(
        "INSERT INTO run_results (question_id, s0_error, s1_created_at, s1_error) "
        "VALUES ('q-yes', NULL, '2026-03-01T12:00:00.000000+00:00', 'skipped_training_cutoff')"
    )
    conn.commit()
    conn.close()
    with store_factory(path) as store:
        assert store.done_slots() == {("q-yes", 1)}


def test_error_slots_are_redone_but_done_slots_are_protected(
    store_factory: StoreFactory, make_result: ResultFactory
) -> None:
    store = store_factory()
    store.write_sample("q-yes", 0, "p", SampleResult.empty(error="server_5xx", created_at=STARTED))
    store.write_sample("q-yes", 0, "p", make_result())
    assert store.read_sample("q-yes", 0) == make_result()
    with pytest.raises(
        StoreError, match=r"question 'q-yes' sample 0: slot is already done; pass overwrite=True"
    ):
        store.write_sample("q-yes", 0, "p", make_result(latency_ms=1))
    store.write_sample("q-yes", 0, "p", make_result(latency_ms=1), overwrite=True)
    assert store.read_sample("q-yes", 0) == make_result(latency_ms=1)
    store.close()


def test_user_prompt_is_kept_and_checked(store_factory: StoreFactory, make_result: ResultFactory) -> None:
    store = store_factory()
    store.write_sample("q-yes", 0, None, SampleResult.skipped(STARTED))
    assert store.read_user_prompt("q-yes") is None
    store.write_sample("q-yes", 1, "the prompt", make_result())
    assert store.read_user_prompt("q-yes") == "the prompt"
    with pytest.raises(StoreError, match="user prompt differs from the one stored for earlier samples"):
        store.write_sample("q-yes", 0, "another prompt", make_result(), overwrite=True)
    store.close()


def test_bad_slots_are_explained(store_factory: StoreFactory, make_result: ResultFactory) -> None:
    store = store_factory()
    with pytest.raises(
        StoreError, match=r"sample index 2 for question 'q-yes' is outside 0..1 \(sampling_n=2\)"
    ):
        store.write_sample("q-yes", 2, "p", make_result())
    with pytest.raises(StoreError, match=r"question 'q-nope' sample 0: the question is not in this database"):
        store.write_sample("q-nope", 0, "p", make_result())
    with pytest.raises(StoreError, match="asked for n=3 samples but the DB holds 2"):
        store.pending_slots(["q-yes"], 3)
    # A refused write leaves nothing behind.
    assert store.done_slots() == set()
    store.close()


def test_reopen_is_idempotent(
    tmp_path: Path, store_factory: StoreFactory, make_result: ResultFactory, meta: RunMeta
) -> None:
    path = tmp_path / "m.db"
    with store_factory(path) as store:
        store.write_sample("q-yes", 0, "p", make_result())
    # Resume after fixing a key: the config snapshot may change, the run identity may not.
    with store_factory(
        path, meta=dataclasses.replace(meta, config_snapshot={"llm": {"api_key": "sk-b…x"}})
    ) as store:
        assert store.read_sample("q-yes", 0) == make_result()
        assert store.read_meta() == meta
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM questions").fetchone()[0] == 3
    assert conn.execute("SELECT COUNT(*) FROM run_meta").fetchone()[0] == 1
    conn.close()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("sampling_n", 3),
        ("source_db_hash", "f" * 64),
        ("model", "vendor-a/model-1::r5::c2"),
        ("belief_protocol_hash", "0123456789abcdef"),
    ],
)
def test_resume_with_other_identity_is_refused(
    tmp_path: Path, store_factory: StoreFactory, meta: RunMeta, field: str, value: object
) -> None:
    path = tmp_path / "m.db"
    store_factory(path).close()
    with pytest.raises(
        StoreError,
        match=rf"cannot resume: run_meta.{field} is .* in the database but .* now; "
        "rerun with the original settings",
    ):
        store_factory(path, meta=dataclasses.replace(meta, **{field: value}))


def test_read_only_open(tmp_path: Path, store_factory: StoreFactory, make_result: ResultFactory) -> None:
    path = tmp_path / "m.db"
    with store_factory(path) as store:
        store.write_sample("q-yes", 0, "p", make_result())
    with ModelStore.open_existing(path) as reader:
        assert reader.sampling_n == 2
        assert reader.read_sample("q-yes", 0) == make_result()
        with pytest.raises(StoreError, match=r"opened read-only; use ModelStore\.open to write"):
            reader.write_sample("q-yes", 1, "p", make_result())
    with pytest.raises(StoreError, match="model database not found"):
        ModelStore.open_existing(tmp_path / "absent.db")


async def test_concurrent_writers_from_threads(
    store_factory: StoreFactory, make_result: ResultFactory
) -> None:
    store = store_factory()
    slots = [(qid, j) for qid in ("q-yes", "q-named", "q-multi") for j in range(2)]
    await asyncio.gather(
        *(
            asyncio.to_thread(store.write_sample, qid, j, f"p {qid}", make_result(latency_ms=j))
            for qid, j in slots
        )
    )
    assert store.done_slots() == set(slots)
    for qid, j in slots:
        assert store.read_sample(qid, j) == make_result(latency_ms=j)
    store.close()


def test_every_model_store_connection_keeps_a_small_page_cache(
    tmp_path: Path, store_factory: StoreFactory, make_result: ResultFactory
) -> None:
    # SQLite's default (2 MiB per connection) made a run's memory grow by 2 MiB per model DB.
    path = tmp_path / "m.db"
    with store_factory(path) as store:
        store.write_sample("q-yes", 0, "p", make_result())
        assert store._conn.execute("PRAGMA cache_size").fetchone() == (PAGE_CACHE_SIZE,)
    with ModelStore.open_existing(path) as reader:
        assert reader._conn.execute("PRAGMA cache_size").fetchone() == (PAGE_CACHE_SIZE,)
    assert -1024 <= PAGE_CACHE_SIZE < 0  # KiB, at most 1 MiB
