"""The status header and the Table 12 decision, as pure functions."""

from __future__ import annotations

import itertools

import pytest

from oracleproto.agent.status import (
    DIRECTIVES,
    Counters,
    Injection,
    choose_injection,
    injection_text,
    tools_revoked,
)


def test_header_text_is_exact() -> None:
    assert Counters(step=3, max_steps=6, searches=1, max_searches=4).header() == (
        "[Harness status] step 3/6 (3 remaining) · web_search 1/4 used (3 left)."
    )
    assert Counters(step=6, max_steps=6, searches=4, max_searches=4).header() == (
        "[Harness status] step 6/6 (0 remaining) · web_search 4/4 used (0 left)."
    )


def test_injection_text_is_header_then_directive_on_next_line() -> None:
    counters = Counters(5, 6, 2, 4)
    text = injection_text(Injection.SOFT_WARNING, counters)
    first, second = text.split("\n")
    assert first == "[Harness status] step 5/6 (1 remaining) · web_search 2/4 used (2 left)."
    assert second == DIRECTIVES[Injection.SOFT_WARNING]
    assert "\\boxed{...}" in second


@pytest.mark.parametrize(
    ("step", "searches", "drop", "unboxed", "expected"),
    [
        # Priority 1: the last step wins over everything.
        (6, 4, True, True, Injection.HARD_CUTOFF),
        (6, 0, False, False, Injection.HARD_CUTOFF),
        # Priority 2: inside the lookahead window with budget left, over an unboxed reply.
        (5, 3, True, True, Injection.SOFT_WARNING),
        # Budget spent inside the window: no soft warning, the commit notice instead.
        (5, 4, True, True, Injection.BUDGET_COMMIT),
        # ... and with drop-tools off, the unboxed continuation.
        (5, 4, False, True, Injection.UNBOXED_CONTINUATION),
        (5, 4, False, False, None),
        # Priority 3 over 4.
        (2, 4, True, True, Injection.BUDGET_COMMIT),
        (2, 3, True, True, Injection.UNBOXED_CONTINUATION),
        (4, 3, True, False, None),
        (1, 0, True, False, None),
    ],
)
def test_priority_order(
    step: int, searches: int, drop: bool, unboxed: bool, expected: Injection | None
) -> None:
    got = choose_injection(
        Counters(step, 6, searches, 4), lookahead=2, drop_tools=drop, last_turn_unboxed=unboxed
    )
    assert got == expected


@pytest.mark.parametrize(
    ("n", "c", "lookahead"), list(itertools.product([1, 2, 4, 6], [0, 1, 3], [0, 1, 2, 3]))
)
def test_each_path_fires_exactly_on_its_trigger(n: int, c: int, lookahead: int) -> None:
    for step, s, drop, unboxed in itertools.product(
        range(1, n + 1), range(c + 1), [True, False], [True, False]
    ):
        got = choose_injection(
            Counters(step, n, s, c), lookahead=lookahead, drop_tools=drop, last_turn_unboxed=unboxed
        )
        hard = step == n
        soft = not hard and n - step < lookahead and s < c
        commit = not hard and not soft and s == c and drop
        cont = not (hard or soft or commit) and unboxed
        assert (got is Injection.HARD_CUTOFF) == hard
        assert (got is Injection.SOFT_WARNING) == soft
        assert (got is Injection.BUDGET_COMMIT) == commit
        assert (got is Injection.UNBOXED_CONTINUATION) == cont
        assert (got is None) == (not (hard or soft or commit or cont))


def test_tool_lists_per_path() -> None:
    assert tools_revoked(Injection.HARD_CUTOFF)
    assert tools_revoked(Injection.BUDGET_COMMIT)
    assert not tools_revoked(Injection.SOFT_WARNING)
    assert not tools_revoked(Injection.UNBOXED_CONTINUATION)
    assert not tools_revoked(None)
