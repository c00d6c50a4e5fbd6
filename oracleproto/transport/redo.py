"""Recorded entries on resume and refresh: which to call live again, and which generation to write."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from oracleproto.errors import ConfigError
from oracleproto.transport.entry import Entry
from oracleproto.transport.keys import Channel
from oracleproto.transport.layout import list_generations

#: Whether a finished sample of an earlier session used the entry with this key.
UsedByDone = Callable[[str], bool]


def redo_on_resume(
    channel: Channel,
    bound_to_sample: bool,
    entry: Entry,
    *,
    write_generation: int,
    used_by_done: UsedByDone | None,
    unused_failures_redo: UsedByDone | None = None,
) -> bool:
    """An entry from an earlier session that a resumed run must call live again.

    ``bound_to_sample``: the request is keyed by its sample context and occurrence (every
    context-bound llm call; search and detector calls of a sample under request_sharing
    ``none``). Such an entry whose final outcome is a failure belongs to exactly one slot, which
    is being redone (a finished sample never asks again), whatever its channel or status.

    The rules below are for shared entries. A search entry that ended in 401/403 aborted the run
    (every Tavily key was rejected), so no finished sample used it. A detector 401/403 does not
    abort (paper Table 13: a ``failed:auth`` verdict), so it is re-sent only when no finished
    sample used it (``used_by_done``, worked out by the runner from the DBs; None = unknown, keep
    it) — typically the key the LLM and the detector share was revoked and the run aborted on the
    LLM's 401. When the runner knows exactly which entries the finished samples used
    (``unused_failures_redo``: every done sample has its entry record), every other failed shared
    entry of this generation is re-sent too — the quota, Retry-After-over-the-cap or
    circuit-breaker failures a stopped session left behind, which no finished sample consumed.
    Without that knowledge, other shared failures stay: a finished sample may have used them.
    Shared entries of an older generation belong to the refreshed run and are never re-sent.
    """
    failed = entry.exception is not None or not 200 <= entry.status < 300
    if bound_to_sample:
        return failed
    if channel == "llm":
        return False
    if entry.generation != write_generation or not failed:
        return False
    if channel == "search" and entry.status in (401, 403):
        return True
    if unused_failures_redo is not None:
        return not unused_failures_redo(entry.key)
    if entry.status not in (401, 403):
        return False
    return channel == "detector" and used_by_done is not None and not used_by_done(entry.key)


def refresh_generation(cassette_dir: Path, requested: int | None) -> int:
    """The generation a refresh writes: a new one, or (resuming) the newest one on disk."""
    newest = max(list_generations(cassette_dir))
    if requested is None:
        return newest + 1
    if requested < 1 or requested not in (newest, newest + 1):
        raise ConfigError(
            f"{cassette_dir}: a refresh writes generation {newest + 1} (or resumes generation {newest}); "
            f"{requested} is neither"
        )
    return requested
