"""Fault injection: seeded, hash-based decisions on latency, 5xx, 429, timeouts.

A decision depends on the server seed, the request's content hash and the attempt index of
that content (how many times the same bytes arrived before). A retried request therefore
draws afresh and can succeed, while a rerun of the same request sequence reproduces every
fault exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from oracleproto.sim import rng


class Fault(StrEnum):
    """What happens to one request."""

    NONE = "none"
    SERVER_5XX = "server_5xx"
    RATE_LIMIT = "rate_limit"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class FaultConfig:
    """Knobs of one simulated service; rates are fractions of requests in [0, 1]."""

    latency_ms: float = 0.0
    """Fixed latency added to every response."""
    jitter_ms: float = 0.0
    """Extra latency, uniform in [0, jitter_ms), drawn per request."""
    fail_5xx: float = 0.0
    """Fraction answered with HTTP 500/502/503."""
    fail_429: float = 0.0
    """Fraction answered with HTTP 429 and a ``Retry-After`` header."""
    fail_timeout: float = 0.0
    """Fraction that never gets an answer (see ``timeout_mode``)."""
    retry_after_s: int = 1
    """Value of the ``Retry-After`` header on injected 429s."""
    timeout_mode: Literal["drop", "hang"] = "drop"
    """``drop`` closes the socket at once; ``hang`` waits ``hang_s`` first, then drops."""
    hang_s: float = 5.0
    """How long a ``hang`` timeout holds the connection (set it above the client timeout)."""
    revoked_keys: frozenset[str] = frozenset()
    """API keys answered with 401 in the provider's real error shape."""

    def __post_init__(self) -> None:
        for name in ("fail_5xx", "fail_429", "fail_timeout"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a fraction in [0, 1], got {value}")
        if self.fail_5xx + self.fail_429 + self.fail_timeout > 1.0:
            raise ValueError("fail_5xx + fail_429 + fail_timeout must not exceed 1")
        if self.latency_ms < 0 or self.jitter_ms < 0 or self.hang_s < 0:
            raise ValueError("latency_ms, jitter_ms and hang_s must be >= 0")
        if self.retry_after_s < 0:
            raise ValueError("retry_after_s must be >= 0")


@dataclass(frozen=True)
class FaultDecision:
    """The injected fault (if any) and the latency of one request."""

    fault: Fault
    delay_s: float
    status: int = 200


_5XX_STATUSES = (500, 502, 503)


class FaultInjector:
    """Decides faults for one service; thread-safe, deterministic per (seed, content, attempt)."""

    def __init__(self, config: FaultConfig, seed: int, service: str) -> None:
        self.config = config
        self._seed = seed
        self._service = service
        self._attempts = rng.Counter()

    def decide(self, content_hash: str) -> FaultDecision:
        """The decision for the next arrival of a request whose body hashes to ``content_hash``."""
        attempt = self._attempts.next(content_hash)
        parts = (self._seed, self._service, content_hash, attempt)
        cfg = self.config
        delay_s = (cfg.latency_ms + cfg.jitter_ms * rng.unit("jitter", *parts)) / 1000.0
        draw = rng.unit("fault", *parts)
        if draw < cfg.fail_5xx:
            return FaultDecision(Fault.SERVER_5XX, delay_s, rng.pick(_5XX_STATUSES, "status", *parts))
        if draw < cfg.fail_5xx + cfg.fail_429:
            return FaultDecision(Fault.RATE_LIMIT, delay_s, 429)
        if draw < cfg.fail_5xx + cfg.fail_429 + cfg.fail_timeout:
            hang = cfg.hang_s if cfg.timeout_mode == "hang" else 0.0
            return FaultDecision(Fault.TIMEOUT, delay_s + hang, 0)
        return FaultDecision(Fault.NONE, delay_s)
