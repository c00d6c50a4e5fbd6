"""Hashing, clocks, call context and error types."""

from __future__ import annotations

import asyncio

from oracleproto.context import (
    CallContext,
    call_context,
    current_call_context,
    current_logical_call,
    logical_call,
)
from oracleproto.dataset.models import letter, letter_index
from oracleproto.errors import DatasetError, DatasetProblem, ErrorKind
from oracleproto.primitives.clock import FakeClock
from oracleproto.primitives.hashing import canonical_json, redact_secret, sha256_16, sha256_hex


def test_canonical_json_is_sorted_compact_and_keeps_unicode() -> None:
    assert canonical_json({"b": 1, "a": ["é", None]}) == '{"a":["é",null],"b":1}'


def test_hash_helpers() -> None:
    assert sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert sha256_16("abc") == "ba7816bf8f01cfea"
    assert redact_secret("sk-abcdef") == "sk-a…" + sha256_hex("sk-abcdef")[:12]


def test_letters_follow_the_dataset_card() -> None:
    assert [letter(i) for i in (0, 1, 25, 26, 27, 32)] == ["A", "B", "Z", "[", "\\", "a"]
    assert letter_index("[") == 26 and letter_index("A") == 0


def test_error_kind_values_are_the_paper_names() -> None:
    assert [k.value for k in ErrorKind] == [
        "network",
        "rate_limit",
        "server_5xx",
        "auth",
        "content_policy",
        "bad_request",
        "unknown",
        "quota",  # our extension (issue 11), after the paper's seven
    ]


def test_dataset_error_lists_every_problem() -> None:
    err = DatasetError("x.db", [DatasetProblem("q1", "options", "bad"), DatasetProblem(None, "m", "r")])
    assert "2 problem(s)" in str(err)
    assert "row 'q1', column 'options': bad" in str(err)
    assert "dataset, column 'm': r" in str(err)


async def test_call_context_is_task_local() -> None:
    seen: list[CallContext | None] = []

    async def worker(sample: int) -> None:
        with call_context(CallContext("m", "q", sample)):
            await asyncio.sleep(0)
            seen.append(current_call_context())

    await asyncio.gather(worker(0), worker(1))
    assert sorted(c.sample for c in seen if c) == [0, 1]
    assert current_call_context() is None


def test_logical_call_scope() -> None:
    assert current_logical_call() is None
    with logical_call() as call:
        call.attempt = 2
        assert current_logical_call() is call
    assert current_logical_call() is None


async def test_fake_clock_records_sleeps_without_waiting() -> None:
    clock = FakeClock()
    start = clock.now()
    await clock.sleep(300)
    assert clock.sleeps == [300]
    assert (clock.now() - start).total_seconds() == 300 and clock.monotonic() == 300
