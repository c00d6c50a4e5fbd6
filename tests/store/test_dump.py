"""Logical dump: identical content regardless of write order, sensitive to any change."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from oracleproto.agent.result import SampleResult
from oracleproto.errors import StoreError
from oracleproto.store import ModelStore, logical_digest, logical_dump

ResultFactory = Callable[..., SampleResult]
StoreFactory = Callable[..., ModelStore]
BASE = datetime(2026, 3, 1, 12, 1, tzinfo=UTC)


def planned(make_result: ResultFactory) -> dict[tuple[str, int], SampleResult]:
    """One distinct result per slot, including a cutoff skip and a parse failure."""
    out: dict[tuple[str, int], SampleResult] = {}
    for qi, qid in enumerate(("q-yes", "q-named", "q-multi")):
        for j in range(2):
            created = BASE + timedelta(seconds=10 * qi + j)
            out[(qid, j)] = make_result(latency_ms=100 * qi + j, created_at=created)
    out[("q-named", 1)] = SampleResult.skipped(BASE)
    out[("q-yes", 1)] = make_result(final_answer_letters=None, correct=None, parse_ok=False, created_at=BASE)
    return out


def write_in_order(
    store: ModelStore,
    slots: list[tuple[str, int]],
    results: dict[tuple[str, int], SampleResult],
    *,
    fail_first: bool,
) -> None:
    for qid, j in slots:
        if fail_first:
            # A retried call error must leave no trace once the retry succeeds.
            store.write_sample(qid, j, f"prompt {qid}", SampleResult.empty(error="network", created_at=BASE))
        store.write_sample(qid, j, f"prompt {qid}", results[(qid, j)], overwrite=fail_first)


def test_dump_is_independent_of_write_order(
    tmp_path: Path, store_factory: StoreFactory, make_result: ResultFactory
) -> None:
    results = planned(make_result)
    slots = sorted(results)
    dumps = set()
    for seed in range(6):
        order = list(slots)
        random.Random(seed).shuffle(order)
        path = tmp_path / f"run{seed}.db"
        with store_factory(path) as store:
            write_in_order(store, order, results, fail_first=seed % 2 == 1)
            store.finish(BASE + timedelta(hours=1))
        dumps.add(logical_dump(path))
    assert len(dumps) == 1
    text = dumps.pop()
    assert text.count("\nrow ") == 1 + 3 + 8 + 1 + 3  # schema_version, questions, templates, meta, results
    assert "table run_results\ncolumns " in text


def test_dump_reflects_any_change(
    tmp_path: Path, store_factory: StoreFactory, make_result: ResultFactory
) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    for path, latency in ((a, 10), (b, 11)):
        with store_factory(path) as store:
            store.write_sample("q-yes", 0, "p", make_result(latency_ms=latency))
    assert logical_digest(a) != logical_digest(b)
    assert len(logical_digest(a)) == 64


def test_dump_reads_an_open_store(
    tmp_path: Path, store_factory: StoreFactory, make_result: ResultFactory
) -> None:
    path = tmp_path / "m.db"
    store = store_factory(path)
    store.write_sample("q-yes", 0, "p", make_result())
    live = logical_dump(path)
    store.close()
    assert logical_dump(path) == live
    assert '"prompt"' not in live and '["q-yes","p",' in live


def test_dump_errors(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="database not found; nothing to dump"):
        logical_dump(tmp_path / "none.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"x" * 4096)
    with pytest.raises(StoreError, match="not a readable SQLite database"):
        logical_dump(junk)
