"""Deterministic randomness for the simulator: every draw is a hash of named parts.

No ``random.Random`` state is shared between requests, so the outcome of one request never
depends on how many other requests the server saw — only on the server seed, the request
content and (for identical requests) their arrival index.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def digest(*parts: object) -> bytes:
    """sha256 of the parts joined by an unambiguous separator."""
    h = hashlib.sha256()
    for part in parts:
        # surrogatepass: a lone surrogate from a hostile request (a JSON escape) hashes too, and
        # every other string hashes as before.
        h.update(str(part).encode("utf-8", "surrogatepass"))
        h.update(b"\x1f")
    return h.digest()


def unit(*parts: object) -> float:
    """A uniform float in [0, 1) determined by ``parts``."""
    return int.from_bytes(digest(*parts)[:8], "big") / 2.0**64


def pick(options: Sequence[T], *parts: object) -> T:
    """One element of ``options`` chosen by ``parts``."""
    if not options:
        raise ValueError("pick() needs at least one option")
    return options[int.from_bytes(digest(*parts)[:8], "big") % len(options)]


def randint(low: int, high: int, *parts: object) -> int:
    """An integer in ``[low, high]`` (inclusive) chosen by ``parts``."""
    if high < low:
        raise ValueError(f"empty range [{low}, {high}]")
    return low + int.from_bytes(digest(*parts)[:8], "big") % (high - low + 1)


class Counter:
    """Thread-safe per-key counter: the n-th arrival of a key gets index n (0-based)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def next(self, key: str) -> int:
        """Return the current index for ``key`` and advance it."""
        with self._lock:
            index = self._counts.get(key, 0)
            self._counts[key] = index + 1
            return index

    def snapshot(self) -> dict[str, int]:
        """A copy of every key's count."""
        with self._lock:
            return dict(self._counts)
