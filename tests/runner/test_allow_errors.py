"""``--allow-errors N|FRACTION`` and the end-of-run list of samples to retry (issue 28 §2)."""

from __future__ import annotations

import pytest

from oracleproto.context import CallContext, call_context
from oracleproto.runner.allow_errors import NO_ERRORS, AllowedErrors
from oracleproto.runner.failure_tally import ERRORED_SHOWN, FailureTally


@pytest.mark.parametrize(
    ("text", "admitted", "limit"),
    [
        ("0", 100, 0),
        ("3", 100, 3),
        ("0.05", 100, 5),
        ("5%", 100, 5),
        ("5%", 10, 0),  # rounded down: an error is never rounded into a pass
        ("1", 0, 1),
        ("100%", 7, 7),
    ],
)
def test_the_limit_is_a_count_or_a_fraction_of_admitted_samples(text: str, admitted: int, limit: int) -> None:
    allowed = AllowedErrors.parse(text)
    assert allowed.limit(admitted) == limit
    assert not allowed.exceeded(limit, admitted) and allowed.exceeded(limit + 1, admitted)


def test_the_default_allows_none() -> None:
    assert NO_ERRORS.exceeded(1, 1000) and not NO_ERRORS.exceeded(0, 1000)


@pytest.mark.parametrize("text", ["", "x", "-1", "1.2", "120%", "inf", "nan", "3 samples"])
def test_anything_else_says_what_is_expected(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected a number of samples \(e\.g\. 3\) or a fraction"):
        AllowedErrors.parse(text)


def test_the_summary_names_the_samples_per_model_and_error_with_the_last_failure() -> None:
    tally = FailureTally()
    for sample in range(ERRORED_SHOWN + 2):
        tally.errored("m::r5::c4", f"q{sample:02d}", 0, "network")
    tally.errored("m::r5::c4", "q99", 2, "unknown")
    tally.errored("a::r5::c4", "q01", 1, "network")
    with call_context(CallContext("m::r5::c4", "q99", 2)):
        tally.failure_detail("llm", "unknown", "m: the reply's usage.prompt_tokens is\n 10^30")
        tally.failure_detail("search", "network", "not a sample's error: never shown")
    lines = tally.errored_lines()
    assert lines[0] == "  a::r5::c4: network (1): q01 #1"
    assert lines[1].startswith("  m::r5::c4: network (14): q00 #0, q01 #0, ") and lines[1].endswith(
        "q11 #0, … and 2 more"
    )
    last = "    last: m: the reply's usage.prompt_tokens is 10^30"
    assert lines[2:] == ["  m::r5::c4: unknown (1): q99 #2", last]
