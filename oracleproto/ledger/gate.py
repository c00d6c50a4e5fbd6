"""``LedgerGate``: every live call of a recording through the shared ledger (``transport.gate.LiveGate``).

Before a call is sent: one token from the bucket of the provider key it carries (when that key has a
rate), then a reservation of the call's bound against the experiment's budget — refused past
``--max-cost`` (``SpendCapError``, exit 5). After it: the reservation settled with the real cost. A
ledger that cannot be reached before a call stops the run (``LedgerUnavailableError``, exit 4); one
lost after a call was answered lets that answer be recorded (it was paid for) and leaves its
reservation counted at its bound. Keys reach the ledger only as :func:`key_id`, a one-way hash.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import httpx

from oracleproto.ledger.base import NANO, Budget, Ledger
from oracleproto.ledger.errors import LedgerUnavailableError
from oracleproto.ledger.pricing import CallPricing
from oracleproto.runner.spend_cap import SpendCapError
from oracleproto.transport.keys import Channel

#: Mixed into every key's hash, so the ledger's bucket names match no other use of the key's hash.
_KEY_DOMAIN = b"oracleproto-ledger-key-v1\0"
_KEY_HEADERS = ("x-api-key", "api-key")
#: Failures before a byte was sent: nothing was billed.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout)


def key_id(secret: str) -> str:
    """The name of a provider key in the ledger: sha256 of a domain tag and the key, 32 hex digits."""
    return hashlib.sha256(_KEY_DOMAIN + secret.encode("utf-8")).hexdigest()[:32]


def credential_of(request: httpx.Request) -> str | None:
    """The provider key a request carries: a Bearer token, an API-key header, or a body ``api_key``."""
    authorization: str = request.headers.get("authorization", "")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    for name in _KEY_HEADERS:
        value: str = request.headers.get(name, "")
        if value:
            return value
    try:
        body = json.loads(request.content or b"null")
    except (ValueError, RecursionError, httpx.RequestNotRead):
        return None
    key = body.get("api_key") if isinstance(body, dict) else None
    return key if isinstance(key, str) and key else None


@dataclass(frozen=True)
class Rate:
    """A token bucket's refill (requests per second) and size (burst)."""

    per_s: float
    burst: int


def usd(nano_usd: int) -> str:
    """``$0.001234`` (nano-USD shown in USD)."""
    return f"${nano_usd / NANO:.6f}"


@dataclass
class SessionCounts:
    """What this process did through the ledger."""

    calls: int = 0
    reserved_nano: int = 0
    settled_nano: int = 0
    waited_s: float = 0.0
    #: Calls answered but not settled (the ledger was lost after the call): counted at their bound.
    unsettled: int = 0


@dataclass
class LedgerGate:
    """Rate tokens and spend reservations of one recording session, on ``ledger``."""

    ledger: Ledger
    #: The budget's name: the experiment id every shard shares.
    budget: str
    #: ``--max-cost`` in nano-USD (None: counted, never refused).
    cap_nano: int | None
    pricing: CallPricing
    #: Key id → its bucket's rate (keys without one are not throttled).
    rates: Mapping[str, Rate] = field(default_factory=dict)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    new_id: Callable[[], str] = lambda: secrets.token_hex(12)
    counts: SessionCounts = field(default_factory=SessionCounts)
    #: The budget when the session ended (``aclose``), for the summary.
    final: Budget | None = None
    _in_flight: int = 0
    _finished: int = 0
    _wake: asyncio.Event = field(default_factory=asyncio.Event)

    async def around(
        self, channel: Channel, request: httpx.Request, send: Callable[[], Awaitable[httpx.Response]]
    ) -> httpx.Response:
        """See ``transport.gate.LiveGate``."""
        credential = credential_of(request)
        if credential is not None:
            ident = key_id(credential)
            rate = self.rates.get(ident)
            if rate is not None:
                await self._throttle(ident, rate)
        body = request.content
        bound = self.pricing.bound(channel, body) or 0
        reservation = await self._reserve(channel, bound)
        self._in_flight += 1
        try:
            try:
                response = await send()
            except _NOT_SENT:
                await self._settle(reservation, 0)
                raise
            except httpx.TransportError:
                await self._settle(reservation, bound)  # sent: it may have been billed
                raise
            # Any other exit (a stop cancelling the call) leaves the reservation open: counted at its bound.
            cost = self.pricing.cost(channel, body, response.status_code, response.content, bound)
            await self._settle(reservation, cost)
            return response
        finally:
            self._in_flight -= 1
            self._finished += 1
            self._wake.set()

    async def _reserve(self, channel: str, bound: int) -> str:
        """A granted reservation of ``bound``. Refused while this process has calls in flight, it
        waits for one of them to settle (a real cost is mostly far below its bound) and asks again;
        refused with none in flight, the run stops at the cap."""
        while True:
            finished = self._finished
            reservation = self.new_id()
            grant = await self.ledger.reserve(self.budget, reservation, bound, self.cap_nano)
            if grant.granted:
                self.counts.calls += 1
                self.counts.reserved_nano += bound
                return reservation
            if self._finished != finished:
                continue  # a call settled while this one asked: ask again at once
            if self._in_flight == 0:
                raise self._refused(channel, bound, grant.committed_nano)
            self._wake.clear()
            await self._wake.wait()

    async def _throttle(self, ident: str, rate: Rate) -> None:
        while (wait := await self.ledger.take(ident, rate.per_s, rate.burst)) > 0:
            self.counts.waited_s += wait
            await self.sleep(wait)

    async def _settle(self, reservation: str, cost: int) -> None:
        try:
            await self.ledger.settle(self.budget, reservation, cost)
        except LedgerUnavailableError:
            # The call is done (and maybe paid): its answer is recorded; its reservation stays
            # committed at its bound. The next call's reservation finds the ledger gone and stops.
            self.counts.unsettled += 1
            return
        self.counts.settled_nano += cost

    def _refused(self, channel: str, bound: int, committed: int) -> SpendCapError:
        assert self.cap_nano is not None
        return SpendCapError(
            f"experiment {self.budget}: the ledger ({self.ledger.where}) has {usd(committed)} committed by "
            f"every shard (spent, or reserved by calls in flight), and this {channel} call may cost up to "
            f"{usd(bound)}, more than --max-cost {usd(self.cap_nano)} allows",
            remedy="raise --max-cost on every shard (or leave it out) if the experiment should go on",
        )

    async def aclose(self) -> None:
        """Read the budget's totals for the summary (best effort), then release the ledger."""
        try:
            self.final = await self.ledger.budget(self.budget)
        except LedgerUnavailableError:
            self.final = None
        await self.ledger.aclose()

    def text(self) -> str:
        """One line for the end-of-run summary."""
        counts = self.counts
        line = (
            f"ledger {self.ledger.where}: this process {counts.calls} paid call(s), "
            f"{usd(counts.settled_nano)} settled, {counts.waited_s:.1f} s waited for rate tokens"
        )
        if counts.unsettled:
            line += f", {counts.unsettled} not settled (the ledger was lost; counted at their bound)"
        if self.final is not None:
            cap = "no --max-cost" if self.cap_nano is None else f"--max-cost {usd(self.cap_nano)}"
            line += (
                f"; experiment {self.budget}: {usd(self.final.settled_nano)} spent by every shard, "
                f"{usd(self.final.open_nano)} reserved, of {cap}"
            )
        return line
