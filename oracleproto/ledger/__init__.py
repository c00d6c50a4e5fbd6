"""The shared budget and rate ledger of a sharded experiment (docs/run-at-scale.md).

Shards that share a provider key or a ``--max-cost`` share one ledger (``LEDGER_URL``, a Redis
server): per-key token buckets and the experiment's running spend, reserved before each paid call
and settled after it. Without ``LEDGER_URL`` nothing here is used and a run behaves as before.
The runner is given a :class:`LedgerGate` over any :class:`Ledger` (injected: tests use
:class:`MemoryLedger`, runs :class:`~oracleproto.ledger.redis_ledger.RedisLedger`); ``redis`` is
imported only when a ledger is opened.
"""

from __future__ import annotations

from oracleproto.ledger.base import NANO, Budget, Grant, Ledger, MemoryLedger
from oracleproto.ledger.config import LedgerConfig, ledger_config, rates_by_key
from oracleproto.ledger.errors import LedgerUnavailableError
from oracleproto.ledger.gate import LedgerGate, Rate, credential_of, key_id
from oracleproto.ledger.pricing import CallPricing
from oracleproto.settings.model import Settings

__all__ = [
    "NANO",
    "Budget",
    "CallPricing",
    "Grant",
    "Ledger",
    "LedgerConfig",
    "LedgerGate",
    "LedgerUnavailableError",
    "MemoryLedger",
    "Rate",
    "credential_of",
    "key_id",
    "ledger_config",
    "open_ledger_gate",
    "rates_by_key",
]


def open_ledger_gate(
    config: LedgerConfig,
    settings: Settings,
    *,
    budget: str,
    max_cost_usd: float | None,
    pricing: CallPricing,
) -> LedgerGate:
    """A gate on the Redis ledger at ``config.url``, checked to answer first (else
    ``LedgerUnavailableError``, before anything is written); ``--max-cost`` needs every call priced."""
    from oracleproto.errors import ConfigError
    from oracleproto.ledger.redis_ledger import RedisLedger, ping

    if max_cost_usd is not None:
        models = [*settings.llm.models, *([settings.detector.model] if settings.detector.enabled else [])]
        missing = pricing.unpriced([m for m in models if m], searches=True)
        if missing:
            raise ConfigError(
                "--max-cost with a ledger reserves each call's most possible cost before sending it, and "
                f"nothing prices {', '.join(missing)}: add them to the price table (--prices / PRICES_FILE; "
                "TAVILY_USD_PER_CREDIT for searches), or set LEDGER_RESERVE_USD to what such a call may cost"
            )
    ping(config.url, timeout_s=config.timeout_s)
    return LedgerGate(
        RedisLedger(config.url, timeout_s=config.timeout_s),
        budget=budget,
        cap_nano=None if max_cost_usd is None else round(max_cost_usd * NANO),
        pricing=pricing,
        rates=rates_by_key(settings, config.rates),
    )
