"""A request resolved to its entry key, and the report of a replay that finds no entry for it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from oracleproto.context import current_call_context, current_logical_call
from oracleproto.errors import ReplayMissError
from oracleproto.transport.diff import nearest
from oracleproto.transport.keys import (
    Channel,
    canonical_request,
    check_sample_identity,
    context_dict,
    entry_key_from_json,
    projection_json,
)
from oracleproto.transport.shared_keys import SharedKey, SharedKeyMemo
from oracleproto.transport.store import CassetteStore

#: ``(channel, sample context, projection text, attempt) -> occurrence`` (the recorder's counter).
Occurrence = Callable[[Channel, dict[str, Any] | None, str, int], int | None]


class PreparedRequest:
    """A request resolved to its key (pure data, computed once per attempt)."""

    # The projection's canonical JSON is computed once and serves the key, the occurrence
    # fingerprint and the hit check; the secrets scan is left to the live path (replay stores nothing).
    __slots__ = (
        "_projection",
        "_shared",
        "attempt",
        "body",
        "body_json",
        "channel",
        "ctx",
        "key",
        "meta",
        "occurrence",
    )
    #: The memoised keying of a search/detector request (None on the main-LLM channel).
    _shared: SharedKey | None
    _projection: dict[str, Any] | None

    def __init__(
        self,
        channel: Channel,
        request: httpx.Request,
        body: bytes,
        shared_keys: SharedKeyMemo,
        occurrence: Occurrence,
    ) -> None:
        self.channel = channel
        self.body = body
        raw_ctx = current_call_context()
        self.ctx = context_dict(raw_ctx)
        call = current_logical_call()
        self.attempt = call.attempt if call is not None else 0
        if channel != "llm":
            # No context or occurrence in the key: the same bytes key the same (memoised).
            shared = shared_keys.get(channel, request.method, str(request.url), body)
            self._shared = shared
            self._projection = None
            self.body_json, self.key, self.meta = shared.body_json, shared.key, dict(shared.meta)
            self.occurrence = None
            return
        self._shared = None
        self._projection = canonical_request(channel, request.method, str(request.url), body)
        check_sample_identity(channel, self._projection, raw_ctx)
        text, self.body_json = projection_json(self._projection)
        self.occurrence = occurrence(channel, self.ctx, text, self.attempt)
        self.key = entry_key_from_json(text, self.ctx, self.occurrence)
        self.meta = {k: v for k, v in self._projection.items() if k != "body"}

    @property
    def projection(self) -> dict[str, Any]:
        """The whitelisted projection (rebuilt on demand for a memoised request: error paths only)."""
        if self._projection is None:
            assert self._shared is not None
            self._projection = self._shared.projection()
        return self._projection


def miss_error(prep: PreparedRequest, store: CassetteStore, cassette_dir: Path) -> ReplayMissError:
    """What to raise when replay has no entry for ``prep``: who asked, and the nearest recording."""
    ctx = current_call_context()
    who = (
        f"model {ctx.model!r}, question {ctx.question_id!r}, sample {ctx.sample}, step {ctx.step}"
        if ctx is not None
        else f"model {prep.projection['model']!r}, no sample context"
    )
    same_channel = store.find(lambda e: e.channel == prep.channel)
    if prep.ctx is not None:
        mine = {k: prep.ctx[k] for k in ("model", "question_id", "sample")}
        same_ctx = [
            e for e in same_channel if e.context is not None and {k: e.context[k] for k in mine} == mine
        ]
        same_channel = same_ctx or same_channel
    found = nearest(prep.projection, same_channel)
    if found is None:
        detail = f"no {prep.channel} entries are recorded at all"
    else:
        near, diff = found
        lines = "\n  ".join(diff) if diff else "(identical request: context or occurrence differs)"
        detail = (
            f"nearest recorded request (entry {near.key}, context {near.context}, "
            f"occurrence {near.occurrence}):\n  {lines}"
        )
    return ReplayMissError(
        f"replay miss on channel {prep.channel}: {who}, occurrence {prep.occurrence}, "
        f"key {prep.key}; cassette {cassette_dir}. {detail}\n"
        "Re-record with --record (or refresh) if the request legitimately changed."
    )
