"""An httpx transport that answers our requests with another harness's captured responses.

Each request of ours is located (channel + logical position) and paired with a captured exchange
at the same position that is not used yet: a byte-identical one (credentials masked) if there is
one, else the earliest by seq. The pairing is one synchronous step under a lock, so concurrent
requests (dozens of detector calls in flight) never take the same exchange. With nothing left at
that position the answer is an HTTP 400 error (a terminal ``bad_request``: our harness gives up on
the call instead of retrying), and the request is reported as unmatched.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace

import httpx

from oracleproto.conformance.compare import masked
from oracleproto.conformance.positions import LlmPosition, Located, Position, locate_ours
from oracleproto.conformance.samples import Classified
from oracleproto.conformance.template import DetectorTemplateMatcher
from oracleproto.context import CallContext, current_call_context

#: Framing headers of the captured wire bytes; the body we hand back is already whole and plain.
_DROPPED = frozenset({"content-length", "content-encoding", "transfer-encoding"})


@dataclass(frozen=True)
class Pairing:
    """One request of ours: where it belongs, its masked body, and the captured exchange it got."""

    order: int
    located: Located
    body: bytes
    captured: Classified | None
    #: The masked bodies are byte-identical.
    identical: bool = False


def no_exchange_body(located: Located) -> bytes:
    """The JSON error answered when no captured exchange is left at ``located``."""
    message = f"conformance: no captured exchange at {located.describe()}"
    return json.dumps({"error": {"message": message, "type": "invalid_request_error"}}).encode("utf-8")


class CaptureResponder(httpx.AsyncBaseTransport):
    """Answer each request with the captured response at its logical position (see module doc)."""

    def __init__(
        self,
        classified: Sequence[Classified],
        *,
        detector_model: str,
        template: DetectorTemplateMatcher,
    ) -> None:
        self.classified = list(classified)
        self.detector_model = detector_model
        self.template = template
        self._free: dict[tuple[str, Position], list[Classified]] = {}
        for item in sorted(self.classified, key=lambda c: c.exchange.seq):
            if item.located.position is not None:
                self._free.setdefault((item.located.channel, item.located.position), []).append(item)
        self._masked: dict[int, bytes] = {}
        self._lock = threading.Lock()
        self.pairings: list[Pairing] = []
        #: (model, question) → the captured sample labels; our samples are mapped onto them.
        self._labels: dict[tuple[str, str], list[int]] = {}
        for _, position in self._free:
            if isinstance(position, LlmPosition):
                labels = self._labels.setdefault((position.model, position.question_id), [])
                if position.sample not in labels:
                    labels.append(position.sample)
        #: (model, question, our sample) → the captured sample label it follows.
        self._sample_of: dict[tuple[str, str, int], int] = {}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Pair ``request`` and answer it with the captured status, headers and body."""
        body = await request.aread()
        pairing = self.pair(request.url.path, body, current_call_context())
        return self.response_for(pairing, request)

    def pair(self, path: str, body: bytes, context: CallContext | None) -> Pairing:
        """Locate one request of ours and take its captured exchange (recorded in ``pairings``)."""
        located = locate_ours(
            path, body, detector_model=self.detector_model, template=self.template, context=context
        )
        ours = masked(body)
        with self._lock:
            captured, identical = self._take(located, ours)
            pairing = Pairing(len(self.pairings), located, ours, captured, identical)
            self.pairings.append(pairing)
        return pairing

    def _captured_sample(self, position: LlmPosition, ours: bytes) -> LlmPosition:
        """``position`` with our sample replaced by the captured sample it follows.

        Samples of one (model, question) are interchangeable until their replies differ, and the
        other harness numbered them in its own order: our sample takes, at its first request, a
        captured sample not yet taken — one whose request is byte-identical if there is one — and
        follows it from then on (its answers are that sample's, so its requests follow too).
        """
        key = (position.model, position.question_id, position.sample)
        label = self._sample_of.get(key)
        if label is None:
            taken = {v for (m, q, _), v in self._sample_of.items() if (m, q) == key[:2]}
            free = [s for s in sorted(self._labels.get(key[:2], [])) if s not in taken]
            same = [s for s in free if self._identical_at(replace(position, sample=s), ours)]
            label = (same or free or [position.sample])[0]
            self._sample_of[key] = label
        return replace(position, sample=label)

    def _identical_at(self, position: LlmPosition, ours: bytes) -> bool:
        return any(self._masked_body(c) == ours for c in self._free.get(("llm", position), []))

    def _take(self, located: Located, ours: bytes) -> tuple[Classified | None, bool]:
        """The exchange to answer with (an identical one first, else the earliest) and whether identical."""
        if located.position is None:
            return None, False
        position = located.position
        if isinstance(position, LlmPosition):
            position = self._captured_sample(position, ours)
        free = self._free.get((located.channel, position))
        if not free:
            return None, False
        index = next((i for i, c in enumerate(free) if self._masked_body(c) == ours), None)
        chosen = free.pop(0 if index is None else index)
        return chosen, index is not None

    def _masked_body(self, item: Classified) -> bytes:
        seq = item.exchange.seq
        found = self._masked.get(seq)
        if found is None:
            found = self._masked[seq] = masked(item.exchange.body)
        return found

    @staticmethod
    def response_for(pairing: Pairing, request: httpx.Request) -> httpx.Response:
        """The httpx response for a pairing: the captured answer, or the 400 of an unmatched request."""
        if pairing.captured is None:
            return httpx.Response(
                400,
                headers={"content-type": "application/json"},
                content=no_exchange_body(pairing.located),
                request=request,
            )
        exchange = pairing.captured.exchange
        if exchange.status == 0:
            # Captured as a dropped connection: ours sees one too (and retries like it would live).
            raise httpx.RemoteProtocolError(
                "conformance: the captured exchange had no response (connection dropped)", request=request
            )
        headers = [
            (name.encode("utf-8", "replace"), value.encode("utf-8", "replace"))
            for name, value in exchange.resp_headers
            if name.strip().lower() not in _DROPPED
        ]
        return httpx.Response(exchange.status, headers=headers, content=exchange.resp_body, request=request)
