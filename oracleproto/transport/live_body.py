"""Reading a live reply: its decoded body bounded in size, the whole attempt bounded in time.

Two limits httpx does not give (issue 28 §5):

* **Size.** ``Response.aread()`` decodes a compressed body in one piece: 64 KB of gzip on the wire
  can be 256 MiB decoded (a gzip bomb), held in memory, recorded, and then refused by the cassette
  reader. Here the body is read raw and decoded a small slice at a time, so memory stays within
  :data:`MAX_RESPONSE_BODY_BYTES` plus one slice's output, and the read stops as soon as the
  decoded body passes the limit.
* **Time.** httpx's timeouts bound each read, so a server dripping one byte a second never times
  out. An attempt gets one deadline — the largest of the request's httpx timeouts, i.e. the
  channel's ``*_TIMEOUT_S`` — from the first byte sent to the last byte read.

Both refusals are httpx transport errors, so the cache records them as the attempt's outcome
(replay raises them again) and the providers classify them: a missed deadline is a
``ReadTimeout`` (``network``, retried like any timeout); an oversized or undecodable body is a
``RemoteProtocolError`` whose message starts with :data:`REFUSED_REPLY` (a provider defect,
``unknown``; cassettes can only name httpx's own classes, hence the message prefix).
"""

from __future__ import annotations

import asyncio
import time

import httpx
from httpx._decoders import IdentityDecoder

from oracleproto.transport.safe_yaml import MAX_ENTRY_CHARS

#: How much larger than a body its YAML can be: literal lines are indented, control characters
#: escaped (``\x01`` is 4 characters), so about 5.5x at worst; 8 leaves room for the request.
YAML_EXPANSION = 8
#: The largest decoded reply body recorded (8 MiB): whatever it holds, its entry stays within the
#: cassette reader's ``MAX_ENTRY_CHARS``, so every recorded reply replays. Real replies are far
#: smaller (a chat completion a few KB, a Tavily search with page bodies well under 1 MiB).
MAX_RESPONSE_BODY_BYTES = MAX_ENTRY_CHARS // YAML_EXPANSION
#: How a refused reply's message starts (``providers.classify`` reads it as a provider defect).
REFUSED_REPLY = "oracleproto refused the reply: "
#: Compressed bytes decoded at a time: deflate expands at most about 1,032x, so one step makes at
#: most about 1 MiB, however the server packed its stream.
_SLICE = 1024


def attempt_deadline(request: httpx.Request) -> float | None:
    """Seconds one attempt may take: the largest of the request's httpx timeouts (None: unbounded)."""
    timeout = request.extensions.get("timeout")
    if not isinstance(timeout, dict):
        return None
    values = [v for v in timeout.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    return max(values) if values else None


def _deadline_error(request: httpx.Request, seconds: float) -> httpx.ReadTimeout:
    return httpx.ReadTimeout(
        f"no complete reply within {seconds:g} s (the channel's timeout bounds the whole attempt, "
        "not each read)",
        request=request,
    )


class _BodyReader:
    """Decodes raw chunks the way httpx does, refusing a body past ``limit`` bytes as it grows."""

    def __init__(self, response: httpx.Response, request: httpx.Request, limit: int) -> None:
        # httpx's own decoder for the reply's Content-Encoding: the recorded bytes are exactly
        # what ``aread()`` gave before (httpx is pinned below 0.29, where this method exists).
        self._decoder = response._get_content_decoder()
        self._encodings = response.headers.get("content-encoding", "identity")
        self._sliced = not isinstance(self._decoder, IdentityDecoder)
        self._request = request
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0

    def whole(self, response: httpx.Response) -> bytes | None:
        """The body of a response an inner transport built already read (a mock), else None."""
        try:
            body = response.content
        except httpx.ResponseNotRead:
            return None
        self._add(body)
        return body

    def feed(self, raw: bytes) -> None:
        """Take one raw chunk; raises ``RemoteProtocolError`` past the limit or on a broken encoding."""
        if not self._sliced:
            self._add(raw)
            return
        for start in range(0, len(raw), _SLICE):
            self._add(self._decode(raw[start : start + _SLICE]))

    def body(self) -> bytes:
        """The whole decoded body (after the last chunk)."""
        if self._sliced:
            self._add(self._decode(None))
        return b"".join(self._parts)

    def _decode(self, raw: bytes | None) -> bytes:
        try:
            return self._decoder.decode(raw) if raw is not None else self._decoder.flush()
        except httpx.DecodingError as exc:
            why = f"its body could not be decoded (Content-Encoding: {self._encodings}): {exc}"
            raise self._refused(why) from None

    def _add(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self._limit:
            raise self._refused(
                f"its body is over {self._limit:,} bytes once decoded (Content-Encoding: {self._encodings}); "
                "larger replies are not recorded (each cassette entry stays readable)"
            )
        if data:
            self._parts.append(data)

    def _refused(self, why: str) -> httpx.RemoteProtocolError:
        return httpx.RemoteProtocolError(REFUSED_REPLY + why, request=self._request)


async def read_live_async(
    inner: httpx.AsyncBaseTransport, request: httpx.Request, limit: int = MAX_RESPONSE_BODY_BYTES
) -> tuple[httpx.Response, bytes]:
    """Send ``request`` through ``inner``; the response and its decoded body, within both limits."""
    deadline = attempt_deadline(request)
    try:
        async with asyncio.timeout(deadline):
            response = await inner.handle_async_request(request)
            try:
                reader = _BodyReader(response, request, limit)
                whole = reader.whole(response)
                if whole is not None:
                    return response, whole
                async for chunk in response.aiter_raw():
                    reader.feed(chunk)
                return response, reader.body()
            finally:
                await _close_uninterrupted(response)
    except TimeoutError:
        assert deadline is not None  # only a deadline raises it here
        raise _deadline_error(request, deadline) from None


async def _close_uninterrupted(response: httpx.Response) -> None:
    """Close ``response`` (and so its connection) even when the task is cancelled again meanwhile.

    The close can be reached by one cancellation (the attempt's deadline, or the run stopping its
    other samples) and interrupted by the other; a close cut short leaves the socket open until
    garbage collection, after the run's event loop has ended. Shielded, it always runs to its end.
    """
    closing = asyncio.ensure_future(response.aclose())
    try:
        await asyncio.shield(closing)
    except asyncio.CancelledError:
        await asyncio.wait([closing])  # a second cancellation: finish closing, then propagate it
        raise


def read_live_sync(
    inner: httpx.BaseTransport, request: httpx.Request, limit: int = MAX_RESPONSE_BODY_BYTES
) -> tuple[httpx.Response, bytes]:
    """The synchronous twin of :func:`read_live_async`; the deadline is checked between reads
    (each read is bounded by httpx's read timeout)."""
    deadline = attempt_deadline(request)
    ends = None if deadline is None else time.monotonic() + deadline
    response = inner.handle_request(request)
    try:
        reader = _BodyReader(response, request, limit)
        whole = reader.whole(response)
        if whole is not None:
            return response, whole
        for chunk in response.iter_raw():
            reader.feed(chunk)
            if ends is not None and time.monotonic() > ends:
                assert deadline is not None
                raise _deadline_error(request, deadline)
        return response, reader.body()
    finally:
        response.close()
