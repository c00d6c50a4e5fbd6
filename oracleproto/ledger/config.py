"""The ledger's settings, read from the environment like the cassette store's (docs/run-at-scale.md).

* ``LEDGER_URL`` — ``redis://[[USER]:PASSWORD@]HOST:PORT/DB`` (or ``rediss://`` for TLS); unset:
  no ledger, the run behaves as it always did (``--max-cost`` per session, no shared rate).
* ``LEDGER_RATES`` — request rates per channel, applied per provider key across every shard:
  ``llm=500/min,search=100/min:10,detector=20/s`` (``N/s`` or ``N/min``, ``:BURST`` optional,
  default one second's worth, at least 1). A key that serves two channels gets the lower rate.
* ``LEDGER_RESERVE_USD`` — what a call no price covers reserves (and counts, unless its reply
  reports its cost); unset, such a call has no bound and ``--max-cost`` with a ledger refuses to start.
* ``LEDGER_TIMEOUT_S`` — how long one ledger command may take (default 5) before the shard stops.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import SecretStr

from oracleproto.errors import ConfigError
from oracleproto.ledger.gate import Rate, key_id
from oracleproto.settings.model import Settings

URL = "LEDGER_URL"
RATES = "LEDGER_RATES"
RESERVE_USD = "LEDGER_RESERVE_USD"
TIMEOUT_S = "LEDGER_TIMEOUT_S"
CHANNELS = ("llm", "search", "detector")
_RATE = re.compile(r"^(\d+(?:\.\d+)?)/(s|min)(?::(\d+))?$")


@dataclass(frozen=True)
class LedgerConfig:
    """What the environment asks of the ledger."""

    url: str
    rates: dict[str, Rate] = field(default_factory=dict)
    reserve_usd: float | None = None
    timeout_s: float = 5.0


def _rate(name: str, text: str) -> Rate:
    match = _RATE.match(text.strip())
    if match is None or float(match.group(1)) <= 0:
        raise ConfigError(
            f"{RATES}: {name}={text!r} is not a rate; write N/s or N/min with N > 0, optionally :BURST "
            "(e.g. llm=500/min,search=100/min:10)"
        )
    per_s = float(match.group(1)) / (1 if match.group(2) == "s" else 60)
    burst = int(match.group(3)) if match.group(3) else max(1, math.floor(per_s))
    if burst < 1:
        raise ConfigError(f"{RATES}: {name}={text!r}: the burst must be at least 1")
    return Rate(per_s, burst)


def _rates(text: str) -> dict[str, Rate]:
    rates: dict[str, Rate] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = item.partition("=")
        name = name.strip().lower()
        if not sep or name not in CHANNELS:
            raise ConfigError(
                f"{RATES}: {item!r}: expected CHANNEL=RATE, CHANNEL one of {', '.join(CHANNELS)}"
            )
        rates[name] = _rate(name, value)
    return rates


def _positive(name: str, raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name}={raw!r}: expected a number above 0")
    return value


def ledger_config(env: Mapping[str, str]) -> LedgerConfig | None:
    """The ledger's settings, or None when ``LEDGER_URL`` is unset or empty."""
    url = env.get(URL, "").strip()
    if not url:
        return None
    if not url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"{URL}: expected redis://HOST:PORT/DB (or rediss:// for TLS, unix:///PATH)")
    reserve = env.get(RESERVE_USD, "").strip()
    timeout = env.get(TIMEOUT_S, "").strip()
    return LedgerConfig(
        url=url,
        rates=_rates(env.get(RATES, "")),
        reserve_usd=_positive(RESERVE_USD, reserve) if reserve else None,
        timeout_s=_positive(TIMEOUT_S, timeout) if timeout else 5.0,
    )


def rates_by_key(settings: Settings, rates: Mapping[str, Rate]) -> dict[str, Rate]:
    """Each provider key of the run (by :func:`key_id`) with its channel's rate; the lower of two."""
    keys: dict[str, list[SecretStr | None]] = {
        "llm": [settings.llm.api_key],
        "search": list(settings.search.api_keys),
        "detector": [settings.detector.api_key or settings.llm.api_key] if settings.detector.enabled else [],
    }
    out: dict[str, Rate] = {}
    for channel, secrets in keys.items():
        rate = rates.get(channel)
        for secret in secrets:
            if rate is None or secret is None or not secret.get_secret_value().strip():
                continue
            ident = key_id(secret.get_secret_value())
            known = out.get(ident, rate)
            out[ident] = Rate(min(known.per_s, rate.per_s), min(known.burst, rate.burst))
    return out
