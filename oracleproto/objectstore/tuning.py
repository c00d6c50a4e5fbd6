"""Retries and parallelism of store transfers, with defaults that suit a real bucket.

Read from the environment so that the same command behaves the same under a scheduler, a CI job
or a test (which shortens the backoff instead of sleeping for seconds):

* ``CASSETTE_STORE_RETRIES`` (default 10): retries of one request after a 5xx (503 SlowDown
  included), a dropped connection or a timeout, with exponential backoff and jitter (obstore's);
* ``CASSETTE_STORE_BACKOFF_MS`` (default 100): the first backoff;
* ``CASSETTE_STORE_RETRY_TIMEOUT_S`` (default 180): no retry starts after this long;
* ``CASSETTE_STORE_JOBS`` (default 8): objects transferred at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from oracleproto.objectstore.errors import ObjectStoreError

RETRIES = "CASSETTE_STORE_RETRIES"
BACKOFF_MS = "CASSETTE_STORE_BACKOFF_MS"
RETRY_TIMEOUT_S = "CASSETTE_STORE_RETRY_TIMEOUT_S"
JOBS = "CASSETTE_STORE_JOBS"


@dataclass(frozen=True)
class Tuning:
    """How hard to retry, and how many transfers run at once."""

    retries: int = 10
    backoff_ms: int = 100
    retry_timeout_s: int = 180
    jobs: int = 8


def _int(env: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise ObjectStoreError(f"{name}={raw!r}: expected a whole number from {low} to {high}")
    return int(raw)


def tuning_from(env: Mapping[str, str]) -> Tuning:
    """The tuning the environment asks for (defaults otherwise)."""
    return Tuning(
        retries=_int(env, RETRIES, 10, 0, 100),
        backoff_ms=_int(env, BACKOFF_MS, 100, 1, 60_000),
        retry_timeout_s=_int(env, RETRY_TIMEOUT_S, 180, 1, 86_400),
        jobs=_int(env, JOBS, 8, 1, 64),
    )
