"""What one record/replay session counts (``recorder.RecordReplay`` owns one of each).

* ``OccurrenceCounter`` — occurrence numbers of requests keyed per call, so record and replay key
  repeats alike: a main-LLM call, and under request_sharing ``none`` a search or detector call of
  a sample, is keyed by its sample context, its request and how many identical (context, request)
  pairs came before it (docs/design/record-replay.md, "Key schema" and "Request sharing").
* ``TrafficTally`` — per channel, the requests seen and how they were served; the keys each
  channel and each sample used.

Both change under the recorder's lock, which it passes in.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from oracleproto.context import current_logical_call
from oracleproto.primitives.hashing import canonical_json, sha256_hex
from oracleproto.transport.keys import Channel
from oracleproto.transport.prepared import PreparedRequest
from oracleproto.transport.traffic import SessionTraffic


class OccurrenceCounter:
    """The occurrence number of each request keyed per call, retries reusing their call's."""

    def __init__(self, lock: threading.Lock) -> None:
        # The recorder's lock: one lock guards all of a session's counters and numbers.
        self._lock = lock
        self._occurrences: Counter[tuple[str, str]] = Counter()
        #: (id of a logical call, occurrence pair) → the number its attempt 0 took, for the channels
        #: keyed per call whose identical requests may be in flight together (detector judgements of
        #: one search): a retry must reuse its own call's number, not the pair's latest.
        self.by_call: dict[tuple[int, tuple[str, str]], int] = {}

    def number(
        self, channel: Channel, ctx: dict[str, Any] | None, projection_text: str, attempt: int
    ) -> int | None:
        """The occurrence of one attempt, or None for a request made outside a sample context."""
        # Only requests keyed per call count repeats (``PreparedRequest`` asks for no other): the
        # main-LLM channel's, and search/detector requests of a sample under request_sharing "none".
        if ctx is None:
            return None
        pair = (canonical_json(ctx), sha256_hex(projection_text))
        if channel != "llm":
            return self._call_occurrence(pair, attempt)
        # A trajectory's LLM calls are sequential: a retry (attempt > 0) reuses the number its
        # attempt 0 took, which is the counter's last value for this pair.
        with self._lock:
            if attempt == 0 or self._occurrences[pair] == 0:
                number = self._occurrences[pair]
                self._occurrences[pair] += 1
                return number
            return self._occurrences[pair] - 1

    def _call_occurrence(self, pair: tuple[str, str], attempt: int) -> int:
        """The occurrence of a search/detector request keyed per call, bound to its logical call.

        Identical detector requests of one search (a page listed twice) are in flight together, so
        "the pair's latest number" could be another call's. Numbers are handed out in the order the
        requests reach the transport: the agent starts the judgements in result order
        (``asyncio.gather`` starts its tasks in order) and nothing before the keying suspends, so
        record and replay number them alike (docs/design/record-replay.md, "Request sharing").
        """
        call = current_logical_call()
        slot = (id(call), pair)
        with self._lock:
            if call is not None and attempt > 0:
                known = self.by_call.get(slot)
                if known is not None:
                    return known
            number = self._occurrences[pair]
            self._occurrences[pair] += 1
            if call is None:
                return number
            # Forgotten when the call ends, before its id can be reused by another object.
            self.by_call[slot] = number
        call.on_finish.append(lambda: self._forget_call_occurrence(slot))
        return number

    def _forget_call_occurrence(self, slot: tuple[int, tuple[str, str]]) -> None:
        """Drop a finished logical call's number (its id may be reused by another object)."""
        with self._lock:
            self.by_call.pop(slot, None)


class TrafficTally:
    """Request counters (``"<channel>:<what>"``) and the keys used, per channel and per sample."""

    def __init__(self, lock: threading.Lock) -> None:
        # The recorder's lock: one lock guards all of a session's counters and numbers.
        self._lock = lock
        self.counts: Counter[str] = Counter()
        self._keys_used: dict[str, set[str]] = {}
        #: (model, question id, sample) → keys of every entry that sample's requests used.
        self._sample_keys: dict[tuple[str, str, int], set[str]] = {}

    def count(self, prep: PreparedRequest, what: str) -> None:
        """Count one ``what`` (requests, hits, live, waited) of ``prep``; a request also notes its key."""
        with self._lock:
            self.counts[f"{prep.channel}:{what}"] += 1
            if what == "requests":
                self._keys_used.setdefault(prep.channel, set()).add(prep.key)
                if prep.ctx is not None:
                    slot = (str(prep.ctx["model"]), str(prep.ctx["question_id"]), int(prep.ctx["sample"]))
                    self._sample_keys.setdefault(slot, set()).add(prep.key)

    def traffic(self) -> SessionTraffic:
        """A copy of the request counters and the keys used, per channel."""
        with self._lock:
            keys = {channel: set(used) for channel, used in self._keys_used.items()}
            return SessionTraffic(Counter(self.counts), keys)

    def take_sample_keys(self, model: str, question_id: str, sample: int) -> list[str]:
        """Sorted keys of the entries one sample used; forgets them."""
        with self._lock:
            return sorted(self._sample_keys.pop((model, question_id, sample), ()))
