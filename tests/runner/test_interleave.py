"""Pending slots run cells side by side, so every channel has work (docs/design/performance.md,
Live scheduling)."""

from __future__ import annotations

from typing import Any, cast

from oracleproto.runner.jobs import Job, interleave


def _jobs(cell: str, n: int) -> list[Job]:
    return [cast(Job, (cell, f"q{i}", 0, "prompt")) for i in range(n)]


def _labels(jobs: list[Job]) -> list[tuple[Any, ...]]:
    return [(job[0], job[1]) for job in jobs]


def test_cells_take_turns_each_in_its_own_order() -> None:
    searching, plain, short = _jobs("a", 3), _jobs("b", 3), _jobs("c", 1)
    assert _labels(interleave([searching, plain, short])) == [
        ("a", "q0"), ("b", "q0"), ("c", "q0"),
        ("a", "q1"), ("b", "q1"),
        ("a", "q2"), ("b", "q2"),
    ]  # fmt: skip


def test_every_slot_is_kept_once() -> None:
    cells = [_jobs("a", 5), [], _jobs("b", 2)]
    out = interleave(cells)
    assert sorted(_labels(out)) == sorted(_labels([job for cell in cells for job in cell]))
    assert interleave([]) == [] and interleave([[]]) == []
