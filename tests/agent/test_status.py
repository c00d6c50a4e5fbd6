"""The status header and the Table 12 decision (the ``oracleproto`` policy), as pure functions.

Every expected text is a literal: the built-in profile must keep producing today's bytes.
"""

from __future__ import annotations

import itertools

import pytest

from oracleproto.agent.policy import Limits, PolicyState, plan_step
from oracleproto.agent.status import Counters, StatusTexts
from oracleproto.errors import ConfigError
from oracleproto.profile import builtin_profile

BUILTIN = StatusTexts(builtin_profile().texts)


def choose(
    step: int,
    n: int,
    searches: int,
    c: int,
    *,
    lookahead: int,
    drop: bool,
    unboxed: bool,
    search: bool = True,
) -> tuple[str | None, bool]:
    """The built-in policy's (injection, offers_tools) at the top of ``step``."""
    limits = Limits(max_steps=n, max_searches=c, search_enabled=search, drop_tools=drop, lookahead=lookahead)
    plan = plan_step("oracleproto", limits, step, PolicyState(searches=searches, previous_unboxed=unboxed))
    return plan.injection, plan.offers_tools


def test_header_text_is_exact() -> None:
    assert BUILTIN.header(Counters(step=3, max_steps=6, searches=1, max_searches=4)) == (
        "[Harness status] step 3/6 (3 remaining) · web_search 1/4 used (3 left)."
    )
    assert BUILTIN.header(Counters(step=6, max_steps=6, searches=4, max_searches=4)) == (
        "[Harness status] step 6/6 (0 remaining) · web_search 4/4 used (0 left)."
    )
    # No search: C_shown = 0 and the built-in profile has no separate disabled clause.
    assert BUILTIN.header(Counters(step=1, max_steps=3, searches=0, max_searches=0)) == (
        "[Harness status] step 1/3 (2 remaining) · web_search 0/0 used (0 left)."
    )


def test_counter_values_are_the_schema_placeholders() -> None:
    assert Counters(2, 6, 5, 4, min_searches=3).values() == {
        "step": "2",
        "max_steps": "6",
        "steps_left_including_current": "5",
        "steps_left_after_current": "4",
        "used": "5",
        "max_search_calls": "4",
        # max(C_shown − s, 0): never negative.
        "searches_left": "0",
        "min_search_calls": "3",
    }


def test_injection_text_is_header_then_directive_on_next_line(kit) -> None:
    counters = Counters(5, 6, 2, 4)
    text = BUILTIN.injection("soft_warning", counters)
    first, second = text.split("\n")
    assert first == "[Harness status] step 5/6 (1 remaining) · web_search 2/4 used (2 left)."
    assert second == kit.directives["soft_warning"]
    assert "\\boxed{...}" in second


@pytest.mark.parametrize("name", ["hard_cutoff", "soft_warning", "budget_exhausted", "unboxed_continuation"])
def test_every_builtin_injection_is_pinned(kit, name: str) -> None:
    header = "[Harness status] step 4/6 (2 remaining) · web_search 3/4 used (1 left)."
    assert BUILTIN.injection(name, Counters(4, 6, 3, 4)) == f"{header}\n{kit.directives[name]}"


def test_retry_text_is_pinned(kit) -> None:
    assert BUILTIN.injection("final_answer_retry", Counters(6, 6, 4, 4)) == (
        "[Harness status] step 6/6 (0 remaining) · web_search 4/4 used (0 left).\n" + kit.retry_directive
    )


def test_builtin_sends_neither_nudges_nor_a_tool_error_status() -> None:
    assert BUILTIN.tool_error_status(Counters(1, 6, 0, 4), strips=True) is None
    assert BUILTIN.tool_error_status(Counters(1, 6, 0, 4), strips=False) is None
    with pytest.raises(ConfigError, match=r"no texts\.injections\.nudge, but this run sends it"):
        BUILTIN.injection("nudge", Counters(1, 6, 0, 4))


@pytest.mark.parametrize(
    ("step", "searches", "drop", "unboxed", "expected"),
    [
        # Priority 1: the last step wins over everything.
        (6, 4, True, True, "hard_cutoff"),
        (6, 0, False, False, "hard_cutoff"),
        # Priority 2: inside the lookahead window with budget left, over an unboxed reply.
        (5, 3, True, True, "soft_warning"),
        # Budget spent inside the window: no soft warning, the commit notice instead.
        (5, 4, True, True, "budget_exhausted"),
        # ... and with drop-tools off, the unboxed continuation.
        (5, 4, False, True, "unboxed_continuation"),
        (5, 4, False, False, None),
        # Priority 3 over 4.
        (2, 4, True, True, "budget_exhausted"),
        (2, 3, True, True, "unboxed_continuation"),
        (4, 3, True, False, None),
        (1, 0, True, False, None),
    ],
)
def test_priority_order(step: int, searches: int, drop: bool, unboxed: bool, expected: str | None) -> None:
    got, _ = choose(step, 6, searches, 4, lookahead=2, drop=drop, unboxed=unboxed)
    assert got == expected


def test_budget_notice_repeats_on_every_step_it_applies() -> None:
    # Unlike the earlier policy, the oracleproto notice is not once per sample.
    limits = Limits(max_steps=6, max_searches=2, search_enabled=True, drop_tools=True, lookahead=0)
    state = PolicyState(searches=2)
    assert [plan_step("oracleproto", limits, k, state).injection for k in (2, 3, 4, 5)] == [
        "budget_exhausted"
    ] * 4


@pytest.mark.parametrize(
    ("n", "c", "lookahead"), list(itertools.product([1, 2, 4, 6], [0, 1, 3], [0, 1, 2, 3]))
)
def test_each_path_fires_exactly_on_its_trigger(n: int, c: int, lookahead: int) -> None:
    for step, s, drop, unboxed in itertools.product(
        range(1, n + 1), range(c + 1), [True, False], [True, False]
    ):
        got, offers = choose(step, n, s, c, lookahead=lookahead, drop=drop, unboxed=unboxed)
        hard = step == n
        soft = not hard and n - step < lookahead and s < c
        commit = not hard and not soft and s == c and drop
        cont = not (hard or soft or commit) and unboxed
        assert (got == "hard_cutoff") == hard
        assert (got == "soft_warning") == soft
        assert (got == "budget_exhausted") == commit
        assert (got == "unboxed_continuation") == cont
        assert (got is None) == (not (hard or soft or commit or cont))
        assert offers == (not (hard or commit))


@pytest.mark.parametrize(("n", "lookahead"), list(itertools.product([1, 3, 6], [0, 2, 5])))
def test_without_search_only_the_cutoff_and_the_continuation_fire(n: int, lookahead: int) -> None:
    # E false: C_shown = 0, so the budget is spent from the start, but there is nothing to revoke
    # (no commit notice) and no search left to warn about (no soft warning), whatever C is.
    for step, unboxed, drop in itertools.product(range(1, n + 1), [True, False], [True, False]):
        got, offers = choose(step, n, 0, 4, lookahead=lookahead, drop=drop, unboxed=unboxed, search=False)
        expected = "hard_cutoff" if step == n else ("unboxed_continuation" if unboxed else None)
        assert got == expected
        assert offers == (step != n)


def test_tool_lists_per_path() -> None:
    # (step, searches, drop, unboxed) reaching each path with N = 6, C = 4, L = 2.
    cases = {
        "hard_cutoff": (6, 0, True, False),
        "budget_exhausted": (2, 4, True, False),
        "soft_warning": (5, 1, True, False),
        "unboxed_continuation": (2, 1, True, True),
        None: (2, 1, True, False),
    }
    offered = {}
    for name, (step, s, drop, unboxed) in cases.items():
        got, offers = choose(step, 6, s, 4, lookahead=2, drop=drop, unboxed=unboxed)
        assert got == name
        offered[name] = offers
    assert offered == {
        "hard_cutoff": False,
        "budget_exhausted": False,
        "soft_warning": True,
        "unboxed_continuation": True,
        None: True,
    }
