"""The ledger interface the runner is given, and an in-process ledger with the same rules.

Two kinds of state, both keyed by names the caller chooses and never by a secret:

* **token buckets**, one per provider key (named by a one-way hash of the key): a request takes
  one token; tokens come back at ``rate_per_s`` up to ``burst``;
* **budgets**, one per experiment: ``committed`` = spend settled + reservations still open. A
  reservation is granted only when ``committed + amount <= cap``, atomically, so shards that share
  a budget can never together commit more than the cap; settling replaces the reserved amount by
  the real cost. A reservation never settled (its process died mid-call) stays committed: counted
  at its bound, never under.

Amounts are integers in nano-USD (10^-9 USD), so sums are exact wherever they are added up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from oracleproto.primitives.clock import Clock

#: nano-USD per USD.
NANO = 1_000_000_000


@dataclass(frozen=True)
class Budget:
    """What a ledger counts for one budget (an experiment)."""

    committed_nano: int = 0
    settled_nano: int = 0

    @property
    def open_nano(self) -> int:
        """Reserved by calls not settled yet (in flight, or cut off by a stop or a crash)."""
        return self.committed_nano - self.settled_nano


@dataclass(frozen=True)
class Grant:
    """The answer to a reservation: granted or not, and the budget's committed total after it."""

    granted: bool
    committed_nano: int


class Ledger(Protocol):
    """A shared ledger: rate buckets and spend budgets. Every method may raise
    ``LedgerUnavailableError`` (the ledger cannot be reached)."""

    #: Where the ledger is, as it may be shown (no password).
    where: str

    async def take(self, bucket: str, rate_per_s: float, burst: int) -> float:
        """Take one token of ``bucket``: 0.0 when taken, else the seconds to wait before asking again."""
        ...

    async def reserve(self, budget: str, reservation: str, nano_usd: int, cap_nano: int | None) -> Grant:
        """Reserve ``nano_usd`` of ``budget`` unless that would pass ``cap_nano`` (None: no cap)."""
        ...

    async def settle(self, budget: str, reservation: str, nano_usd: int) -> None:
        """Replace ``reservation`` by the real cost ``nano_usd`` (an unknown reservation adds it)."""
        ...

    async def budget(self, budget: str) -> Budget:
        """The budget's totals now."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class MemoryLedger:
    """The ledger's rules in one process (tests, and the reference for ``RedisLedger``)."""

    clock: Clock
    where: str = "memory"
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _committed: dict[str, int] = field(default_factory=dict)
    _settled: dict[str, int] = field(default_factory=dict)
    _open: dict[tuple[str, str], int] = field(default_factory=dict)

    async def take(self, bucket: str, rate_per_s: float, burst: int) -> float:
        """See :class:`Ledger`."""
        now = self.clock.monotonic()
        state = self._buckets.setdefault(bucket, _Bucket(float(burst), now))
        state.tokens = min(float(burst), state.tokens + max(0.0, now - state.at) * rate_per_s)
        state.at = max(now, state.at)
        if state.tokens >= 1.0:
            state.tokens -= 1.0
            return 0.0
        return (1.0 - state.tokens) / rate_per_s

    async def reserve(self, budget: str, reservation: str, nano_usd: int, cap_nano: int | None) -> Grant:
        """See :class:`Ledger`."""
        committed = self._committed.get(budget, 0)
        if cap_nano is not None and committed + nano_usd > cap_nano:
            return Grant(False, committed)
        self._committed[budget] = committed + nano_usd
        self._open[budget, reservation] = nano_usd
        return Grant(True, committed + nano_usd)

    async def settle(self, budget: str, reservation: str, nano_usd: int) -> None:
        """See :class:`Ledger`."""
        held = self._open.pop((budget, reservation), 0)
        self._committed[budget] = self._committed.get(budget, 0) + nano_usd - held
        self._settled[budget] = self._settled.get(budget, 0) + nano_usd

    async def budget(self, budget: str) -> Budget:
        """See :class:`Ledger`."""
        return Budget(self._committed.get(budget, 0), self._settled.get(budget, 0))

    async def aclose(self) -> None:
        """Nothing to release."""
