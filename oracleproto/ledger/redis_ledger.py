"""The shared ledger on a Redis server (``LEDGER_URL=redis://HOST:PORT/DB``), through redis-py.

Every change is one Lua script, so it is atomic on the server whatever the number of shards:
a token is taken, a reservation granted or a cost settled entirely or not at all, and the bucket
refill reads the server's clock (``TIME``), not the shards'. Keys (``oracleproto:v1:…``) name a
bucket by the one-way hash of a provider key and a budget by the experiment id; nothing else is
stored. Any failure to reach the server (refused, reset, timed out, authentication) becomes
:class:`LedgerUnavailableError`: the caller stops rather than spend without the shared count.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from oracleproto.ledger.base import Budget, Grant
from oracleproto.ledger.errors import LedgerUnavailableError
from oracleproto.primitives.redact import redact_url

T = TypeVar("T")
PREFIX = "oracleproto:v1"

# KEYS[1] bucket; ARGV rate per second, burst. Returns the microseconds to wait (0: taken).
_TAKE = """
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000000)
  at = now
end
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'at', string.format('%.17g', at))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 60000)
return wait
"""
# KEYS[1] budget, KEYS[2] its open reservations; ARGV id, amount, cap (-1: none).
_RESERVE = """
local amount = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local committed = tonumber(redis.call('HGET', KEYS[1], 'committed') or '0')
if cap >= 0 and committed + amount > cap then
  return {0, committed}
end
redis.call('HINCRBY', KEYS[1], 'committed', amount)
redis.call('HSET', KEYS[2], ARGV[1], amount)
return {1, committed + amount}
"""
# KEYS[1] budget, KEYS[2] its open reservations; ARGV id, real cost.
_SETTLE = """
local real = tonumber(ARGV[2])
local held = redis.call('HGET', KEYS[2], ARGV[1])
local delta = real
if held then
  delta = real - tonumber(held)
  redis.call('HDEL', KEYS[2], ARGV[1])
end
redis.call('HINCRBY', KEYS[1], 'committed', delta)
redis.call('HINCRBY', KEYS[1], 'settled', real)
return 1
"""


def bucket_key(bucket: str) -> str:
    """The Redis key of a token bucket."""
    return f"{PREFIX}:bucket:{bucket}"


def budget_keys(budget: str) -> list[str]:
    """The Redis keys of a budget and of its open reservations (one hash slot: ``{budget}``)."""
    return [f"{PREFIX}:budget:{{{budget}}}", f"{PREFIX}:budget:{{{budget}}}:open"]


class RedisLedger:
    """:class:`~oracleproto.ledger.base.Ledger` on a Redis server (5.0 or later, for ``TIME`` in scripts)."""

    def __init__(self, url: str, *, timeout_s: float = 5.0, retries: int = 2) -> None:
        self.where = redact_url(url)
        self._timeout_s = timeout_s
        # Connection errors are retried briefly (a restarted proxy); then the shard stops. A script
        # retried after a lost reply may count twice: over, never under.
        retry = Retry(ExponentialBackoff(cap=0.5, base=0.05), retries)
        self._client: Any = aioredis.Redis.from_url(
            url,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry=retry,
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        self._take = self._client.register_script(_TAKE)
        self._reserve = self._client.register_script(_RESERVE)
        self._settle = self._client.register_script(_SETTLE)

    async def _guard(self, call: Awaitable[T]) -> T:
        try:
            async with asyncio.timeout(self._timeout_s * 4):
                return await call
        except (RedisError, OSError, TimeoutError) as exc:
            detail = redact_url(str(exc)) or "no reply"
            raise LedgerUnavailableError(
                f"{self.where} (LEDGER_URL) did not answer ({type(exc).__name__}: {detail})",
                remedy="bring the ledger back (or leave LEDGER_URL unset to run without one)",
            ) from None

    async def take(self, bucket: str, rate_per_s: float, burst: int) -> float:
        """See :class:`~oracleproto.ledger.base.Ledger`."""
        waited = await self._guard(self._take(keys=[bucket_key(bucket)], args=[repr(rate_per_s), burst]))
        return int(waited) / 1_000_000

    async def reserve(self, budget: str, reservation: str, nano_usd: int, cap_nano: int | None) -> Grant:
        """See :class:`~oracleproto.ledger.base.Ledger`."""
        cap = -1 if cap_nano is None else cap_nano
        granted, committed = await self._guard(
            self._reserve(keys=budget_keys(budget), args=[reservation, nano_usd, cap])
        )
        return Grant(bool(int(granted)), int(committed))

    async def settle(self, budget: str, reservation: str, nano_usd: int) -> None:
        """See :class:`~oracleproto.ledger.base.Ledger`."""
        await self._guard(self._settle(keys=budget_keys(budget), args=[reservation, nano_usd]))

    async def budget(self, budget: str) -> Budget:
        """See :class:`~oracleproto.ledger.base.Ledger`."""
        committed, settled = await self._guard(
            self._client.hmget(budget_keys(budget)[0], ["committed", "settled"])
        )
        return Budget(int(committed or 0), int(settled or 0))

    async def aclose(self) -> None:
        """Close the connection pool (errors on the way out are not the run's)."""
        with contextlib.suppress(RedisError, OSError):
            await self._client.aclose()


def ping(url: str, *, timeout_s: float = 5.0) -> None:
    """Check, before a run writes anything, that the ledger answers; ``LedgerUnavailableError`` if not."""

    async def once() -> None:
        ledger = RedisLedger(url, timeout_s=timeout_s, retries=0)
        try:
            await ledger._guard(ledger._client.ping())
        finally:
            await ledger.aclose()

    asyncio.run(once())
