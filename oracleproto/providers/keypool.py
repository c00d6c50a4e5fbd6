"""Tavily key pool (paper Table 11): least-used dispatch, permanent blacklist, timed cooldown.

One pool is shared by every search client of a process (injected), so usage counts
accumulate across grid cells. Keys are held as ``SecretStr`` and only ever shown redacted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import SecretStr

from oracleproto.errors import AuthError, ConfigError, QuotaError
from oracleproto.primitives.clock import Clock
from oracleproto.primitives.hashing import redact_secret


@dataclass
class _KeyState:
    secret: SecretStr
    uses: int = 0
    blacklisted: bool = False
    #: Retired for this process because its credit or plan limit is exhausted (Tavily 432/433).
    out_of_quota: bool = False
    cooldown_until: float = float("-inf")


@dataclass(frozen=True)
class KeyLease:
    """One dispatch of a key: its pool index and the secret to send."""

    index: int
    secret: SecretStr

    @property
    def redacted(self) -> str:
        """The key as it may appear in messages: first 4 chars + sha256-12."""
        return redact_secret(self.secret.get_secret_value())


class TavilyKeyPool:
    """Healthy keys dispatched least-used first (ties by position); state changes via ``report_*``."""

    def __init__(self, keys: Sequence[SecretStr | str], clock: Clock) -> None:
        secrets = [k if isinstance(k, SecretStr) else SecretStr(k) for k in keys]
        secrets = [s for s in secrets if s.get_secret_value().strip()]
        if not secrets:
            raise ConfigError("TAVILY_API_KEY is empty; set one or more Tavily keys (comma-separated)")
        self._keys = [_KeyState(secret=s) for s in secrets]
        self._clock = clock

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def usage_counts(self) -> tuple[int, ...]:
        """Dispatches per key, in pool order."""
        return tuple(k.uses for k in self._keys)

    @property
    def blacklisted(self) -> tuple[bool, ...]:
        """Which keys are permanently dead (auth failures)."""
        return tuple(k.blacklisted for k in self._keys)

    def _usable(self, state: _KeyState) -> bool:
        return not state.blacklisted and not state.out_of_quota

    def alive(self) -> bool:
        """True while at least one key is neither blacklisted nor out of quota."""
        return any(self._usable(k) for k in self._keys)

    def acquire(self) -> KeyLease | None:
        """The least-used healthy key (counted as used), or ``None`` when all live keys cool down.

        Raises ``QuotaError`` when every key is dead and at least one ran out of quota,
        ``AuthError`` when every key was rejected.
        """
        if not self.alive():
            self._raise_exhausted()
        now = self._clock.monotonic()
        healthy = [i for i, k in enumerate(self._keys) if self._usable(k) and k.cooldown_until <= now]
        if not healthy:
            return None
        index = min(healthy, key=lambda i: (self._keys[i].uses, i))
        state = self._keys[index]
        state.uses += 1
        return KeyLease(index=index, secret=state.secret)

    def seconds_until_available(self) -> float:
        """How long until some live key leaves its cooldown (0 when one is healthy now)."""
        now = self._clock.monotonic()
        waits = [max(0.0, k.cooldown_until - now) for k in self._keys if self._usable(k)]
        return min(waits) if waits else 0.0

    def report_auth_failure(self, lease: KeyLease) -> None:
        """Blacklist the key for the rest of the process (401/403)."""
        self._keys[lease.index].blacklisted = True

    def report_quota_exhausted(self, lease: KeyLease) -> None:
        """Retire the key for the rest of the process: its credit or plan limit is used up."""
        self._keys[lease.index].out_of_quota = True

    def _raise_exhausted(self) -> None:
        n = len(self._keys)
        quota = sum(k.out_of_quota for k in self._keys)
        if quota:
            rejected = n - quota
            also = f"; {rejected} other(s) were rejected (HTTP 401/403)" if rejected else ""
            raise QuotaError(
                f"Tavily: {quota} of {n} key(s) in TAVILY_API_KEY hit their plan or usage limit "
                f"(HTTP 432/433 or a quota body){also}",
                channel="search",
                remedy="raise the plan or pay-as-you-go limit on the Tavily dashboard, or add a key "
                "with credit to the pool (TAVILY_API_KEY takes a comma-separated list)",
            )
        raise AuthError(
            f"all {n} Tavily key(s) were rejected (HTTP 401/403); check TAVILY_API_KEY", channel="search"
        )

    def report_rate_limited(self, lease: KeyLease, cooldown_s: float) -> None:
        """Cool the key down for ``cooldown_s`` seconds (429 or quota body)."""
        state = self._keys[lease.index]
        state.cooldown_until = max(state.cooldown_until, self._clock.monotonic() + cooldown_s)
