"""Names in a run directory: run ids, virtual grid-cell slugs, model file names, timestamps.

All rules come from run-layout.md; researchers already hold directories named this way, so
the mappings here must stay byte-for-byte stable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Protocol

from oracleproto.errors import StoreError
from oracleproto.primitives.clock import Clock

RUN_ID_RE = re.compile(r"^\d{8}-\d{6}-[0-9a-f]{4}$")
VIRTUAL_SLUG_RE = re.compile(r"^(.+?)::r(\d+)::c(\d+)$")
ONLINE_SUFFIX = ":online"
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S.%f+00:00"
_UNSAFE_CHAR_RE = re.compile(r"[^A-Za-z0-9._-]")


class RandomBits(Protocol):
    """The randomness a run id needs (``random.Random`` and ``secrets.SystemRandom`` fit)."""

    def getrandbits(self, k: int, /) -> int:
        """A non-negative integer with ``k`` random bits."""
        ...


def new_run_id(clock: Clock, rand: RandomBits) -> str:
    """A fresh run id ``YYYYMMDD-HHMMSS-xxxx`` from the clock's UTC time and 16 random bits."""
    now = clock.now().astimezone(UTC)
    return f"{now:%Y%m%d-%H%M%S}-{rand.getrandbits(16):04x}"


def validate_run_id(run_id: str) -> str:
    """Return ``run_id`` if it has the run-layout format, else raise :class:`StoreError`."""
    if not RUN_ID_RE.fullmatch(run_id):
        raise StoreError(
            f"invalid run id {run_id!r}: expected UTC 'YYYYMMDD-HHMMSS-xxxx' with xxxx four lowercase "
            "hex characters (e.g. '20260301-120000-0a1f'); omit the run id to start a new run"
        )
    return run_id


def validate_real_slug(real: str) -> str:
    """Return a real model slug if it may carry a grid suffix, else raise :class:`StoreError`."""
    if not real or real != real.strip():
        raise StoreError(f"invalid model slug {real!r}: it must be non-empty without surrounding spaces")
    if "::" in real:
        raise StoreError(
            f"invalid model slug {real!r}: '::' is reserved for grid cells ('{{real}}::r{{R}}::c{{C}}'); "
            "use the real provider slug"
        )
    if real.endswith(ONLINE_SUFFIX):
        raise StoreError(
            f"invalid model slug {real!r}: the ':online' suffix enables provider-side browsing, which "
            "the browsing barrier forbids; drop the suffix"
        )
    return real


def virtual_slug(real: str, r: int, c: int) -> str:
    """The grid-cell slug ``{real}::r{R}::c{C}`` (R results per search call, C search-call cap)."""
    validate_real_slug(real)
    if r < 0 or c < 0:
        raise StoreError(f"invalid grid cell for {real!r}: r={r}, c={c}; both must be >= 0")
    return f"{real}::r{r}::c{c}"


def parse_virtual_slug(slug: str) -> tuple[str, int, int]:
    """Split a virtual slug into ``(real, R, C)``; raise :class:`StoreError` if it is not one."""
    match = VIRTUAL_SLUG_RE.fullmatch(slug)
    if match is None:
        raise StoreError(
            f"not a virtual model slug: {slug!r}; expected '{{real}}::r{{R}}::c{{C}}', "
            "e.g. 'vendor/model::r5::c4'"
        )
    return match.group(1), int(match.group(2)), int(match.group(3))


def model_file_name(slug: str) -> str:
    """The per-model SQLite file name: ``/`` → ``__``, other unsafe characters → ``_``, + ``.db``."""
    if not slug:
        raise StoreError("cannot name a model file for an empty slug")
    return _UNSAFE_CHAR_RE.sub("_", slug.replace("/", "__")) + ".db"


def model_file_map(slugs: Iterable[str]) -> dict[str, str]:
    """Map each slug to its file name; two slugs on one file (even up to case) is an error.

    Case-only differences are rejected too: the run directory must survive being copied to a
    case-insensitive file system (macOS, Windows) without two models sharing a database.
    """
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for slug in slugs:
        if slug in out:
            raise StoreError(f"model slug {slug!r} is listed twice; list each model once")
        name = model_file_name(slug)
        other = seen.get(name.lower())
        if other is not None:
            raise StoreError(
                f"model slugs {other!r} and {slug!r} both map to the database file {name!r} "
                "(file names replace '/' and characters outside [A-Za-z0-9._-]); "
                "rename one of them or evaluate them in separate runs"
            )
        seen[name.lower()] = slug
        out[slug] = name
    return out


def format_timestamp(moment: datetime) -> str:
    """A timezone-aware datetime as the layout's UTC text ``%Y-%m-%dT%H:%M:%S.%f+00:00``."""
    if moment.tzinfo is None or moment.utcoffset() is None:
        raise StoreError(f"timestamp {moment.isoformat()} has no timezone; pass an aware UTC datetime")
    return moment.astimezone(UTC).strftime(TIMESTAMP_FORMAT)


def parse_timestamp(text: str) -> datetime:
    """Parse a stored ISO timestamp (any offset; naive means UTC) into an aware UTC datetime."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError as exc:
        raise StoreError(
            f"invalid timestamp {text!r}: expected ISO 8601 such as '2026-03-01T12:00:00.000000+00:00'"
        ) from exc
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
