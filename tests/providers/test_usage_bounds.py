"""Every usage number a provider sends is bounded at parse time (issue 28 §5).

10^30 tokens crashed the store (SQLite holds 64-bit integers) and left a run that could never
finish; NaN made ``replay`` and ``cassettes stats`` crash. Out of range → the reply is a provider
defect (``MalformedBodyError``, a call error ``unknown``); not a number (NaN, Infinity, a string,
a fraction) → "not reported", as it was always read, so recordings holding one replay unchanged.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

import pytest

from oracleproto.primitives.usage_cost import (
    MAX_CALL_COST_USD,
    MAX_TOKEN_COUNT,
    UsageOutOfRangeError,
    cached_prompt_tokens,
    provider_cost_usd,
    token_count,
)
from oracleproto.providers.chat_parse import (
    MalformedBodyError,
    body_usage,
    parse_chat_completion,
    parse_usage,
)
from oracleproto.providers.types import Usage
from oracleproto.transport.entry import Entry
from oracleproto.transport.stats import entry_tally

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def reply(usage: Any) -> bytes:
    body = {"id": "c1", "choices": [{"message": {"role": "assistant", "content": "ok"}}], "usage": usage}
    return json.dumps(body).encode("utf-8")


@pytest.mark.parametrize(
    ("usage", "field"),
    [
        ({"prompt_tokens": 10**30}, "prompt_tokens"),
        ({"prompt_tokens": 1e30}, "prompt_tokens"),
        ({"completion_tokens": -1}, "completion_tokens"),
        ({"completion_tokens_details": {"reasoning_tokens": MAX_TOKEN_COUNT + 1}}, "reasoning_tokens"),
        ({"prompt_tokens_details": {"cached_tokens": 10**20}}, "cached_tokens"),
        ({"prompt_cache_hit_tokens": -5}, "prompt_cache_hit_tokens"),
        ({"cost": 1e9}, "cost"),
        ({"cost": -0.5}, "cost"),
        ({"cost_in_usd_ticks": 10**400}, "cost_in_usd_ticks"),
        ({"cost": 1, "is_byok": True, "cost_details": {"upstream_inference_cost": 10**400}}, "upstream"),
    ],
)
def test_a_number_out_of_range_makes_the_reply_a_defect(usage: dict[str, Any], field: str) -> None:
    with pytest.raises(MalformedBodyError, match=rf"usage\.\S*{field}\S* is .*outside 0….*a provider defect"):
        parse_chat_completion(reply(usage), latency_ms=1, received_at=NOW)
    # A failed reply's billing is unreadable, not a crash.
    assert body_usage(reply(usage)) is None


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, "12", None, True, 1.5, [3], {"n": 3}])
def test_what_is_not_a_count_reads_as_not_reported(value: Any) -> None:
    usage = {"prompt_tokens": value, "completion_tokens": value, "cost_in_usd_ticks": value}
    # A fraction is a fine cost (USD), not a token count.
    cost = None if value == 1.5 else value
    assert parse_usage({**usage, "cost": cost}) == Usage()


def test_the_bounds_themselves_are_counts() -> None:
    usage = parse_usage(
        {"prompt_tokens": MAX_TOKEN_COUNT, "completion_tokens": 0, "cost": MAX_CALL_COST_USD, "cached": 1}
    )
    bounds = Usage(prompt_tokens=MAX_TOKEN_COUNT, completion_tokens=0, cost_usd=float(MAX_CALL_COST_USD))
    assert usage == bounds
    assert token_count(12.0, "x", strict=True) == 12


def test_lenient_readers_ignore_what_strict_ones_refuse() -> None:
    huge = {"prompt_tokens_details": {"cached_tokens": 10**30}, "cost": 10**400, "cost_in_usd_ticks": -1}
    assert cached_prompt_tokens(huge) is None and provider_cost_usd(huge) is None
    with pytest.raises(UsageOutOfRangeError):
        cached_prompt_tokens(huge, strict=True)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b'{"choices": [], "usage": {"prompt_tokens": ' + b"9" * 5000 + b"}}", "4300"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_json_no_reply_looks_like_is_malformed_not_a_crash(body: bytes, why: str) -> None:
    with pytest.raises(MalformedBodyError, match=why):
        parse_chat_completion(body, latency_ms=1, received_at=NOW)


def _entry(body: bytes) -> Entry:
    return Entry(
        key="k", channel="llm", request_meta={}, request_body="{}", context=None, occurrence=None,
        method="POST", uri="http://x/v1/chat/completions", request_headers={}, status=200, reason="OK",
        response_headers={}, body=body, exception=None, latency_ms=1, recorded_at="2026-01-01T00:00:00+00:00",
    )  # fmt: skip


@pytest.mark.parametrize(
    "usage_text",
    [
        '{"prompt_tokens": NaN, "completion_tokens": Infinity, "cost": NaN}',
        '{"prompt_tokens": 1000000000000000000000000000000, "completion_tokens": -4}',
        '{"prompt_tokens": ' + "9" * 5000 + "}",
    ],
)
def test_cassette_statistics_count_nothing_for_a_defective_usage(usage_text: str) -> None:
    # `cassettes stats` and replay's "what replay saves" line crashed on these (int(NaN)).
    body = ('{"choices": [{"message": {"content": "ok"}}], "usage": ' + usage_text + "}").encode()
    assert entry_tally(_entry(body)) == ("llm", 1, 0, 0, None, False)
