"""What a provider's ``usage`` object says a call cost, and how many prompt tokens were cached.

Pure and dependency-free, so the transport's cassette statistics, the refresh audit and the
providers read the same fields the same way (docs/design/metrics.md, "Cost as the paper reports it").
Gateways report the invoice of each call: OpenRouter sends ``cost`` in USD (credits) and, for a
bring-your-own-key call (``is_byok: true``), the upstream provider's charge in
``cost_details.upstream_inference_cost``; xAI sends ``cost_in_usd_ticks``, an integer in 1e-10
USD. Cached prompt tokens come as ``prompt_tokens_details.cached_tokens`` (OpenAI, OpenRouter)
or ``prompt_cache_hit_tokens`` (DeepSeek).

Every number is bounded (issue 28 §5): a reply reporting 10^30 tokens crashed the store (SQLite
holds 64-bit integers) and left a run that could never finish. A value that is not a number (a
string, null, NaN, ±Infinity, a fraction where a count is due) means "not reported", as it always
did, so recordings holding one replay unchanged; a number outside its range is a provider defect:
``strict`` readers (the providers, at parse time) raise :class:`UsageOutOfRangeError`, lenient ones
(statistics over recorded cassettes) ignore it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: xAI's unit: 1 USD = 10^10 ticks.
USD_TICKS_PER_USD = 10_000_000_000
#: The largest token count one reply may report. Far above any context window (about 10^7 in
#: 2026), and small enough that a run's sums stay exact in SQLite, numpy (int64) and JSON readers
#: that use doubles, whatever the number of calls.
MAX_TOKEN_COUNT = 10**12
#: The most one call may cost, in USD; xAI's ticks are bounded by the same amount.
MAX_CALL_COST_USD = 10**6
_MAX_TICKS = MAX_CALL_COST_USD * USD_TICKS_PER_USD


class UsageOutOfRangeError(ValueError):
    """A ``usage`` number outside its range: the reply is a provider defect, not a count to store."""

    def __init__(self, field: str, value: int | float, bound: int) -> None:
        shown = repr(value)
        shown = shown if len(shown) <= 40 else f"{shown[:20]}…({len(shown)} digits)"
        self.field = field
        super().__init__(f"usage.{field} is {shown}, outside 0…{bound:,}")


def _number(value: Any, field: str, bound: int, *, strict: bool) -> int | float | None:
    """``value`` if a finite number within [0, bound]; None when not a number; else out of range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if 0 <= value <= bound:
        return value
    if strict:
        raise UsageOutOfRangeError(field, value, bound)
    return None


def token_count(value: Any, field: str, *, strict: bool = False, bound: int = MAX_TOKEN_COUNT) -> int | None:
    """A reported count: an integer (or an integral float) in 0…``bound``; None when not reported."""
    if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
        return None  # a fraction is not a count: "not reported", as it always was
    number = _number(value, field, bound, strict=strict)
    return None if number is None else int(number)


def _usd(value: Any, field: str, *, strict: bool) -> float | None:
    # Compared as given: float() of a 400-digit integer raises OverflowError.
    number = _number(value, field, MAX_CALL_COST_USD, strict=strict)
    return None if number is None else float(number)


def provider_cost_usd(usage: Mapping[str, Any], *, strict: bool = False) -> float | None:
    """The USD the provider billed for the call, or ``None`` when ``usage`` does not say.

    xAI's integer ticks win over a float ``cost`` when both are present (a proxy may add the
    float): they are exact. A BYOK call on OpenRouter adds the upstream charge to the fee.
    ``strict``: a number out of range raises ``UsageOutOfRangeError`` (else it is ignored).
    """
    ticks = token_count(usage.get("cost_in_usd_ticks"), "cost_in_usd_ticks", strict=strict, bound=_MAX_TICKS)
    if ticks is not None:
        return ticks / USD_TICKS_PER_USD
    cost = _usd(usage.get("cost"), "cost", strict=strict)
    if cost is None:
        return None
    details = usage.get("cost_details")
    if usage.get("is_byok") is True and isinstance(details, Mapping):
        upstream = _usd(
            details.get("upstream_inference_cost"), "cost_details.upstream_inference_cost", strict=strict
        )
        if upstream is not None:
            return cost + upstream
    return cost


def cached_prompt_tokens(usage: Mapping[str, Any], *, strict: bool = False) -> int | None:
    """Prompt tokens read from the provider's cache, or ``None`` when not reported."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, Mapping):
        field = "prompt_tokens_details.cached_tokens"
        cached = token_count(details.get("cached_tokens"), field, strict=strict)
        if cached is not None:
            return cached
    return token_count(usage.get("prompt_cache_hit_tokens"), "prompt_cache_hit_tokens", strict=strict)
