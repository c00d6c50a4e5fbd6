"""A main-LLM call that failed although the provider billed it (its final reply reported usage).

The cost fields of ``usage`` are read by :mod:`oracleproto.primitives.usage_cost` (re-exported here).
"""

from __future__ import annotations

from datetime import datetime

from oracleproto.errors import CallFailedError, ErrorKind
from oracleproto.primitives.usage_cost import USD_TICKS_PER_USD, cached_prompt_tokens, provider_cost_usd
from oracleproto.providers.types import Usage

__all__ = ["USD_TICKS_PER_USD", "BilledCallFailedError", "cached_prompt_tokens", "provider_cost_usd"]


class BilledCallFailedError(CallFailedError):
    """A main-LLM call that failed although its final reply reported usage: the provider billed it."""

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        usage: Usage,
        status_code: int | None = None,
        latency_ms: int | None = None,
        received_at: datetime | None = None,
    ) -> None:
        super().__init__(
            kind, message, status_code=status_code, latency_ms=latency_ms, received_at=received_at
        )
        self.usage = usage
