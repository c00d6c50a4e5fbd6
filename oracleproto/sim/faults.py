"""Fault injection: seeded, hash-based decisions on latency, 5xx, 429, timeouts, broken connections
and broken bodies, and keys revoked from the start or mid-run. Odd replies (issue 28 §5) apply to
every successful answer: usage no provider should report (10^30 tokens, NaN, Infinity), a gzip
bomb (a few KB on the wire, many MiB decoded) and a body dripped one byte at a time.

A decision depends on the server seed, the request's content hash and the attempt index of
that content (how many times the same bytes arrived before). A retried request therefore
draws afresh and can succeed, while a rerun of the same request sequence reproduces every
fault exactly.
"""

from __future__ import annotations

import math
import statistics
import threading
import zlib
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from oracleproto.sim import rng
from oracleproto.sim.loopback import LoopbackResponse


class Fault(StrEnum):
    """What happens to one request."""

    NONE = "none"
    SERVER_5XX = "server_5xx"
    RATE_LIMIT = "rate_limit"
    TIMEOUT = "timeout"
    RESET = "reset"
    RESET_MID_BODY = "reset_mid_body"
    TRUNCATED = "truncated"
    MALFORMED = "malformed"


#: Impossible usage a simulated chat answer may report (``FaultConfig.odd_usage``).
OddUsage = Literal["huge", "nan", "infinity"]


@dataclass(frozen=True)
class FaultConfig:
    """Knobs of one simulated service; rates are fractions of requests in [0, 1]."""

    latency_ms: float = 0.0
    """Fixed latency added to every response."""
    jitter_ms: float = 0.0
    """Extra latency, uniform in [0, jitter_ms), drawn per request."""
    latency_sigma: float = 0.0
    """With > 0, ``latency_ms`` is the median of a log-normal latency with this shape (a heavy tail)."""
    fail_5xx: float = 0.0
    """Fraction answered with HTTP 500/502/503."""
    fail_429: float = 0.0
    """Fraction answered with HTTP 429 and a ``Retry-After`` header."""
    fail_timeout: float = 0.0
    """Fraction that never gets an answer (see ``timeout_mode``)."""
    fail_reset: float = 0.0
    """Fraction whose connection is reset (TCP RST) before any response byte."""
    fail_reset_mid_body: float = 0.0
    """Fraction that gets the status line, headers and half the body, then a TCP RST."""
    fail_truncated: float = 0.0
    """Fraction that gets headers announcing the full ``Content-Length`` but only half the body,
    then a clean close (a body cut short by a proxy or a dying upstream)."""
    fail_malformed: float = 0.0
    """Fraction answered HTTP 200 with a body that is not valid JSON."""
    retry_after_s: int | None = 1
    """Value of the ``Retry-After`` header on injected 429s; ``None`` sends no header."""
    retry_after_max_s: int | None = None
    """When set, each injected 429's ``Retry-After`` is drawn uniformly from ``retry_after_s`` to
    this many seconds (whole seconds, deterministic per request and attempt), as a provider whose
    window varies answers; ``None``: always ``retry_after_s``."""
    timeout_mode: Literal["drop", "hang"] = "drop"
    """``drop`` closes the socket at once; ``hang`` waits ``hang_s`` first, then drops."""
    hang_s: float = 5.0
    """How long a ``hang`` timeout holds the connection (set it above the client timeout)."""
    revoked_keys: frozenset[str] = frozenset()
    """API keys answered with 401 in the provider's real error shape."""
    revoked_after: int = 0
    """Requests to the service that ``revoked_keys`` still serve before the first 401 (0: revoked
    from the start; N: a key revoked mid-run)."""
    quota_after: int | None = None
    """Credit for this many successful answers; every later request gets the provider's
    exhausted-credit rejection (``None`` = unlimited). A new simulator starts with fresh credit."""
    quota_status: int | None = None
    """Status of that rejection: chat 429 (OpenAI ``insufficient_quota``, the default) or 402
    (OpenRouter); search 432 (plan limit, the default) or 433 (pay-as-you-go limit)."""
    echo_key: bool = False
    """Echo the caller's credential, as careless providers and proxies do: whole and as a
    24-character prefix in response headers, prefix, suffix and middle in every JSON body, and
    the prefix in 401 messages (tests that no part of a key reaches disk or terminal)."""
    odd_usage: OddUsage | None = None
    """Every successful chat answer reports impossible usage: ``huge`` 10^30 prompt tokens,
    ``nan`` / ``infinity`` JSON ``NaN`` / ``Infinity`` token counts and cost."""
    gzip_bomb_mib: int = 0
    """> 0: every successful answer is sent ``Content-Encoding: gzip``, its JSON preceded by this
    many MiB of spaces (64 MiB is about 64 KB on the wire)."""
    drip_s: float = 0.0
    """> 0: every successful answer's body is sent one byte every ``drip_s`` seconds (a reply that
    never trips a per-read timeout)."""

    def __post_init__(self) -> None:
        for name in _RATE_FIELDS:
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a fraction in [0, 1], got {value}")
        if sum(getattr(self, name) for name in _RATE_FIELDS) > 1.0:
            raise ValueError(f"{' + '.join(_RATE_FIELDS)} must not exceed 1")
        if self.latency_ms < 0 or self.jitter_ms < 0 or self.hang_s < 0 or self.latency_sigma < 0:
            raise ValueError("latency_ms, jitter_ms, latency_sigma and hang_s must be >= 0")
        if self.retry_after_s is not None and self.retry_after_s < 0:
            raise ValueError("retry_after_s must be >= 0")
        if self.retry_after_max_s is not None and (
            self.retry_after_s is None or self.retry_after_max_s < self.retry_after_s
        ):
            raise ValueError("retry_after_max_s needs retry_after_s and must be >= it")
        if self.revoked_after < 0:
            raise ValueError("revoked_after must be >= 0")
        if self.quota_after is not None and self.quota_after < 0:
            raise ValueError("quota_after must be >= 0")
        if self.gzip_bomb_mib < 0 or self.drip_s < 0:
            raise ValueError("gzip_bomb_mib and drip_s must be >= 0")
        if self.odd_usage not in (None, "huge", "nan", "infinity"):
            raise ValueError(f"odd_usage must be huge, nan or infinity, got {self.odd_usage!r}")


#: The rate knobs in the order a draw walks them: new kinds go last, so adding one never
#: changes the faults an existing configuration injects.
_RATE_FIELDS = (
    "fail_5xx",
    "fail_429",
    "fail_timeout",
    "fail_reset",
    "fail_reset_mid_body",
    "fail_truncated",
    "fail_malformed",
)
_FAULT_OF_RATE = {
    "fail_5xx": Fault.SERVER_5XX,
    "fail_429": Fault.RATE_LIMIT,
    "fail_timeout": Fault.TIMEOUT,
    "fail_reset": Fault.RESET,
    "fail_reset_mid_body": Fault.RESET_MID_BODY,
    "fail_truncated": Fault.TRUNCATED,
    "fail_malformed": Fault.MALFORMED,
}


@dataclass(frozen=True)
class FaultDecision:
    """The injected fault (if any) and the latency of one request."""

    fault: Fault
    delay_s: float
    status: int = 200
    #: The ``Retry-After`` seconds of an injected 429 (``None``: the configured fixed value or none).
    retry_after_s: int | None = None


_5XX_STATUSES = (500, 502, 503)
_NORMAL = statistics.NormalDist()


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
        base_ms = cfg.latency_ms
        if cfg.latency_sigma > 0:
            u = min(max(rng.unit("latency", *parts), 1e-9), 1 - 1e-9)
            base_ms *= math.exp(cfg.latency_sigma * _NORMAL.inv_cdf(u))
        delay_s = (base_ms + cfg.jitter_ms * rng.unit("jitter", *parts)) / 1000.0
        draw = rng.unit("fault", *parts)
        bound = 0.0
        for name in _RATE_FIELDS:
            bound += getattr(cfg, name)
            if draw < bound:
                return self._decision(_FAULT_OF_RATE[name], delay_s, parts)
        return FaultDecision(Fault.NONE, delay_s)

    def _decision(self, fault: Fault, delay_s: float, parts: tuple[object, ...]) -> FaultDecision:
        if fault is Fault.SERVER_5XX:
            return FaultDecision(fault, delay_s, rng.pick(_5XX_STATUSES, "status", *parts))
        if fault is Fault.RATE_LIMIT:
            low, high = self.config.retry_after_s, self.config.retry_after_max_s
            if low is None or high is None:
                return FaultDecision(fault, delay_s, 429)
            wait = rng.randint(low, high, "retry-after", *parts)
            return FaultDecision(fault, delay_s, 429, retry_after_s=wait)
        if fault is Fault.TIMEOUT:
            hang = self.config.hang_s if self.config.timeout_mode == "hang" else 0.0
            return FaultDecision(fault, delay_s + hang, 0)
        return FaultDecision(fault, delay_s, 0 if fault is Fault.RESET else 200)


#: The impossible usage numbers of ``FaultConfig.odd_usage``.
_ODD_USAGE: dict[str, Any] = {"huge": 10**30, "nan": math.nan, "infinity": math.inf}


def odd_usage(config: FaultConfig, payload: dict[str, Any]) -> dict[str, Any]:
    """``payload`` (a chat completion) with the configured impossible usage, else unchanged."""
    if config.odd_usage is None or not isinstance(payload.get("usage"), dict):
        return payload
    value = _ODD_USAGE[config.odd_usage]
    usage = dict(payload["usage"])
    usage["prompt_tokens"] = value
    if config.odd_usage != "huge":
        # Not a count at all: every number of the usage, the cost included.
        usage.update(completion_tokens=value, total_tokens=value, cost=value)
    return {**payload, "usage": usage}


def odd_delivery(config: FaultConfig, response: LoopbackResponse) -> LoopbackResponse:
    """A successful ``response`` as the configured gzip bomb and/or byte drip, else unchanged."""
    if config.gzip_bomb_mib > 0:
        response.body = _bomb(config.gzip_bomb_mib, response.body)
        response.headers = {**response.headers, "Content-Encoding": "gzip"}
    if config.drip_s > 0:
        response.drip_s = config.drip_s
    return response


_PADDING: dict[int, tuple[bytes, Any]] = {}
_PADDING_LOCK = threading.Lock()


def _bomb(mib: int, body: bytes) -> bytes:
    """gzip of ``mib`` MiB of spaces then ``body`` (still valid JSON: leading whitespace)."""
    with _PADDING_LOCK:
        found = _PADDING.get(mib)
        if found is None:
            # Compressed once per size; each answer continues from a copy of the compressor.
            packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
            block = b" " * (1 << 20)
            head = b"".join(packer.compress(block) for _ in range(mib))
            found = _PADDING[mib] = (head, packer)
        head, packer = found
        tail = packer.copy()
    return head + tail.compress(body) + tail.flush()
