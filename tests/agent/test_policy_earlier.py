"""The ``earlier`` injection policy (harness-profile schema §5), as pure functions.

Every expectation is worked out by hand from the schema's rules; the exhaustive sweeps restate
each rule independently of the implementation's structure (first matching rule, then tools).
"""

from __future__ import annotations

import itertools

import pytest

from oracleproto.agent.policy import Limits, PolicyState, budget_cap, plan_step, should_nudge, strips_hint


def limits(
    n: int = 6,
    c: int = 4,
    *,
    search: bool = True,
    drop: bool = True,
    lookahead: int = 2,
    force: bool = True,
    min_searches: int = 0,
    max_nudges: int = 0,
) -> Limits:
    return Limits(
        max_steps=n,
        max_searches=c,
        search_enabled=search,
        drop_tools=drop,
        lookahead=lookahead,
        min_searches=min_searches,
        max_nudges=max_nudges,
        force_near_limit=force,
    )


def plan(lim: Limits, step: int, **state: object) -> tuple[str | None, bool]:
    got = plan_step("earlier", lim, step, PolicyState(**state))  # type: ignore[arg-type]
    return got.injection, got.offers_tools


# -- rule 1: forced finalisation only inside the lookahead window ------------------------------


@pytest.mark.parametrize(
    ("n", "lookahead", "step", "searches", "expected"),
    [
        # N = 6, L = 2: N − k + 1 ≤ 2 holds at k = 5 (2) and k = 6 (1), not at k = 4 (3).
        (6, 2, 4, 0, None),
        (6, 2, 5, 0, "soft_warning"),
        (6, 2, 6, 0, "hard_cutoff"),
        # s ≥ C_shown (4/4 used): the no-search variant of the warning.
        (6, 2, 5, 4, "soft_warning_no_search"),
        (6, 2, 5, 7, "soft_warning_no_search"),
        (6, 2, 5, 3, "soft_warning"),
        # L = 3 opens the window one step earlier: k = 4 gives N − k + 1 = 3.
        (6, 3, 4, 0, "soft_warning"),
        (6, 3, 3, 0, None),
        # L = 1: only the last step, which is the hard cutoff.
        (6, 1, 5, 0, None),
        (6, 1, 6, 0, "hard_cutoff"),
        # L = 0: no forced finalisation at all, not even at k = N.
        (6, 0, 6, 0, None),
        # N = 1, L = 2: the first step is also the last.
        (1, 2, 1, 0, "hard_cutoff"),
    ],
)
def test_forced_finalisation_window(
    n: int, lookahead: int, step: int, searches: int, expected: str | None
) -> None:
    assert plan(limits(n, lookahead=lookahead), step, searches=searches)[0] == expected


def test_forced_finalisation_needs_the_switch() -> None:
    # F false: steps inside the window fall through to the lower rules (here: nothing, then the
    # continuation), and the last step keeps its tools.
    off = limits(force=False)
    assert plan(off, 6) == (None, True)
    assert plan(off, 5, previous_unboxed=True) == ("unboxed_continuation", True)


def test_soft_warning_without_search_is_the_no_search_variant() -> None:
    # E false: C_shown = 0, so the warning is the no-search one even with nothing searched and C = 4.
    assert plan(limits(search=False), 5) == ("soft_warning_no_search", True)
    # C = 0 with E true: C_shown = 0 too; and D with s ≥ C = 0 takes the tools away.
    assert plan(limits(c=0), 5) == ("soft_warning_no_search", False)
    assert plan(limits(c=0, drop=False), 5) == ("soft_warning_no_search", True)


def test_forced_finalisation_wins_over_the_other_rules() -> None:
    state = {"searches": 4, "previous_unboxed": True}
    assert plan(limits(), 5, **state) == ("soft_warning_no_search", False)
    assert plan(limits(), 6, **state) == ("hard_cutoff", False)
    # The notice not sent yet stays unsent: rule 1 fired, not rule 2.
    s = PolicyState(searches=4, previous_unboxed=True)
    plan_step("earlier", limits(), 5, s)
    assert s.budget_notice_sent is False


# -- rule 2: budget exhausted, once per sample ----------------------------------------------------


def test_budget_exhausted_fires_once_per_sample() -> None:
    lim = limits(n=8)
    state = PolicyState(searches=4)
    got = [plan_step("earlier", lim, k, state) for k in (2, 3, 4, 5)]
    assert [p.injection for p in got] == ["budget_exhausted", None, None, None]
    # The tools stay away on every step where D and s ≥ C, notice or not.
    assert [p.offers_tools for p in got] == [False, False, False, False]
    assert state.budget_notice_sent is True


def test_after_the_notice_the_continuation_can_fire_again() -> None:
    state = PolicyState(searches=4, previous_unboxed=True)
    assert plan_step("earlier", limits(n=8), 2, state).injection == "budget_exhausted"
    assert plan_step("earlier", limits(n=8), 3, state).injection == "unboxed_continuation"


@pytest.mark.parametrize(
    ("c", "search", "drop", "searches", "expected"),
    [
        (4, True, True, 4, ("budget_exhausted", False)),
        (4, True, True, 3, (None, True)),
        # D off: no notice, tools stay although the budget is spent.
        (4, True, False, 4, (None, True)),
        # The rule compares s with C, the configured cap, not C_shown: with E false and C = 4,
        # nothing has been searched, so nothing is exhausted ...
        (4, False, True, 0, (None, True)),
        # ... while C = 0 is exhausted from the first step, E or not.
        (0, False, True, 0, ("budget_exhausted", False)),
        (0, True, True, 0, ("budget_exhausted", False)),
    ],
)
def test_budget_rule_reads_the_configured_cap(
    c: int, search: bool, drop: bool, searches: int, expected: tuple[str | None, bool]
) -> None:
    assert plan(limits(c=c, search=search, drop=drop), 2, searches=searches) == expected


# -- rule 3: the continuation after an unboxed, non-nudged reply ---------------------------------


@pytest.mark.parametrize(
    ("unboxed", "nudged", "expected"),
    [(True, False, "unboxed_continuation"), (True, True, None), (False, True, None), (False, False, None)],
)
def test_continuation_only_after_an_unboxed_reply_that_was_not_nudged(
    unboxed: bool, nudged: bool, expected: str | None
) -> None:
    assert plan(limits(), 3, previous_unboxed=unboxed, previous_nudged=nudged) == (expected, True)


# -- the whole table, restated rule by rule --------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "c", "lookahead"), list(itertools.product([1, 2, 4, 6], [0, 1, 3], [0, 1, 2, 3]))
)
def test_each_rule_fires_exactly_on_its_trigger(n: int, c: int, lookahead: int) -> None:
    for step, s, drop, unboxed, nudged, sent, search, force in itertools.product(
        range(1, n + 1), range(c + 2), *[[True, False]] * 6
    ):
        lim = limits(n, c, search=search, drop=drop, lookahead=lookahead, force=force)
        state = PolicyState(
            searches=s, previous_unboxed=unboxed, previous_nudged=nudged, budget_notice_sent=sent
        )
        got = plan_step("earlier", lim, step, state)
        shown = c if search else 0
        forced = force and n - step + 1 <= lookahead
        hard = forced and step == n
        soft_none = forced and not hard and (shown == 0 or s >= shown)
        soft = forced and not hard and not soft_none
        spent = drop and s >= c
        budget = not forced and spent and not sent
        cont = not forced and not budget and unboxed and not nudged
        expected = {
            "hard_cutoff": hard,
            "soft_warning": soft,
            "soft_warning_no_search": soft_none,
            "budget_exhausted": budget,
            "unboxed_continuation": cont,
        }
        fired = [name for name, on in expected.items() if on]
        assert len(fired) <= 1
        assert got.injection == (fired[0] if fired else None), (step, s, drop, unboxed, nudged, sent, search)
        assert got.offers_tools == (not hard and not spent)
        assert state.budget_notice_sent == (sent or budget)


# -- the §6 budget cap, the tool-error hint and the nudge -----------------------------------------


def test_budget_cap_is_c_for_earlier_and_c_shown_for_oracleproto() -> None:
    assert budget_cap("earlier", limits(c=4, search=False)) == 4
    assert budget_cap("oracleproto", limits(c=4, search=False)) == 0
    assert budget_cap("earlier", limits(c=3)) == budget_cap("oracleproto", limits(c=3)) == 3


@pytest.mark.parametrize(
    ("step", "searches", "drop", "expected"),
    [
        (6, 0, False, True),  # k = N
        (6, 0, True, True),
        (5, 0, True, False),  # k = N − 1 is not the last step
        (2, 4, True, True),  # D and s ≥ C
        (2, 5, True, True),
        (2, 3, True, False),
        (2, 4, False, False),  # D off
    ],
)
def test_strips_hint(step: int, searches: int, drop: bool, expected: bool) -> None:
    assert strips_hint(limits(drop=drop), step, searches) is expected


def test_nudge_conditions() -> None:
    base = limits(min_searches=2, max_nudges=2)
    assert should_nudge(base, 1, PolicyState(searches=1, nudges=1))
    # Each condition on its own turns the nudge off.
    assert not should_nudge(limits(search=False, min_searches=2, max_nudges=2), 1, PolicyState())
    assert not should_nudge(limits(min_searches=0, max_nudges=2), 1, PolicyState())
    assert not should_nudge(limits(min_searches=2, max_nudges=0), 1, PolicyState())
    assert not should_nudge(base, 1, PolicyState(searches=2))  # s = MIN
    assert not should_nudge(base, 1, PolicyState(nudges=2))  # MAXN nudges sent
    assert not should_nudge(base, 6, PolicyState())  # k = N
    assert should_nudge(base, 5, PolicyState())  # k = N − 1 still nudges
