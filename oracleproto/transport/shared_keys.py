"""The key of a request on a shared channel (search, detector), computed once per distinct request.

A replay sends the same search and detector requests many times (a 6 × 80 × 3 run: 17,535
detector requests over 1,845 entries): every sample judges the same results. Their key is a
pure function of the channel, method, URL and body bytes — no sample context, no occurrence —
so identical bytes give an identical projection, canonical body and key. Keying parses the
body and serialises it canonically (the larger part of a replayed request's keying cost);
this memo does that once per distinct request and serves the repeats from a bounded LRU.

The main-LLM channel is not memoised: its key also depends on the sample context and the
occurrence counter, and its requests are distinct anyway. Under ``request_sharing`` ``none`` a
search or detector request made for a sample is keyed like that too, but its projection is still
taken from this memo (the same bytes, the same projection); only its key is computed per call.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from oracleproto.primitives.hashing import canonical_json
from oracleproto.primitives.safe_text import escape_surrogates
from oracleproto.transport.keys import Channel, canonical_request, entry_key_from_json, projection_json

#: Distinct shared requests kept (about the size of the body each: its canonical text).
SHARED_KEY_MEMO = 2048


@dataclass(frozen=True)
class SharedKey:
    """What keying a shared-channel request yields (read-only: copy ``meta`` before storing it)."""

    #: The projection without its body (what an entry stores as ``request_meta``).
    meta: dict[str, Any]
    #: Canonical JSON of the projection's body.
    body_json: str
    key: str

    def projection(self) -> dict[str, Any]:
        """The whole projection (rebuilt from the canonical body: only error reports need it)."""
        return {**self.meta, "body": json.loads(self.body_json)}

    def projection_parts(self) -> tuple[bytes, bytes, bytes]:
        """The projection's canonical JSON as UTF-8 parts (``keys.projection_json``'s text).

        For a request keyed per call (``request_sharing`` ``none``): its key hashes this with the
        sample context and occurrence. Not kept in the memo: the default sharing never needs it.
        """
        rest = canonical_json(self.meta)
        return b'{"body":', self.body_json.encode("utf-8"), ("," + rest[1:]).encode("utf-8")


def shared_key(channel: Channel, method: str, url: str, body: bytes) -> SharedKey:
    """Key a request that carries no sample context and no occurrence (not memoised)."""
    projection = canonical_request(channel, method, url, body)
    text, body_json = projection_json(projection)
    try:
        key = entry_key_from_json(text, None, None)
    except UnicodeEncodeError:
        # A lone surrogate, raw in the parsed body: carried escaped (as in ``prepared.py``).
        text, body_json = escape_surrogates(text), escape_surrogates(body_json)
        key = entry_key_from_json(text, None, None)
    meta = {k: v for k, v in projection.items() if k != "body"}
    return SharedKey(meta, body_json, key)


class SharedKeyMemo:
    """A bounded, thread-safe LRU of ``shared_key`` by (channel, method, URL, sha256 of the body)."""

    def __init__(self, limit: int = SHARED_KEY_MEMO) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._memo: OrderedDict[tuple[str, str, str, bytes], SharedKey] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, channel: Channel, method: str, url: str, body: bytes) -> SharedKey:
        """``shared_key(channel, method, url, body)``, from the memo when this request was keyed before."""
        # sha256 identifies the body (as it identifies entries) without holding its bytes.
        slot = (channel, method, url, hashlib.sha256(body).digest())
        with self._lock:
            found = self._memo.get(slot)
            if found is not None:
                self._memo.move_to_end(slot)
                self.hits += 1
                return found
        found = shared_key(channel, method, url, body)
        with self._lock:
            self.misses += 1
            self._memo[slot] = found
            if len(self._memo) > self._limit:
                self._memo.popitem(last=False)
        return found
