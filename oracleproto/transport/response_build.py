"""An ``httpx.Response`` holding known body bytes, built without httpx's read pipeline.

``httpx.Response(content=body)`` reads its own byte stream back through the content decoder,
a chunker and a request context (about a tenth of a replayed request's transport cost). For a
body that needs no decoding the result of that read is the body itself, so it is set directly;
the response is otherwise what ``content=`` builds (tested equal, attribute by attribute).

The headers a response carries depend only on the stored headers and the body's length, so
they are normalised once (``response_shape``) and copied into each response built from them
(``shaped_response``): a replay serves each shared entry to many requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

#: ``Content-Encoding`` values under which httpx's decoder returns the bytes unchanged.
_PASS_THROUGH = frozenset({"", "identity"})


@dataclass(frozen=True)
class ResponseShape:
    """The headers of every response built from one (headers, body length): never mutated."""

    #: The stored headers, as given.
    given: tuple[tuple[str, str], ...]
    #: The headers the response ends up with (``Content-Length`` added as ``content=`` adds it);
    #: None when a ``Content-Encoding`` needs httpx's decoder.
    headers: httpx.Headers | None
    #: The header encoding httpx settles on while building the response (it caches it).
    encoding: str


def response_shape(headers: list[tuple[str, str]], body: bytes) -> ResponseShape:
    """Normalise ``headers`` for responses carrying ``body`` (or a body of the same length)."""
    built = httpx.Headers(headers)
    encodings = {part.strip().lower() for part in built.get("content-encoding", "").split(",")}
    if not encodings <= _PASS_THROUGH:
        # A stored encoded body (never written by the recorder, which stores decoded bytes):
        # let httpx decode it exactly as it always has.
        return ResponseShape(tuple(headers), None, built.encoding)
    if body:
        # What ``content=`` adds (httpx's ``encode_content``) unless the headers carry one.
        built.setdefault("Content-Length", str(len(body)))
    return ResponseShape(tuple(headers), built, built.encoding)


def shaped_response(
    status: int,
    shape: ResponseShape,
    body: bytes,
    *,
    extensions: dict[str, Any],
    request: httpx.Request,
) -> httpx.Response:
    """``httpx.Response(status, headers=…, content=body, …)`` from a shape, already read and closed."""
    if shape.headers is None:
        return httpx.Response(
            status, headers=list(shape.given), content=body, extensions=extensions, request=request
        )
    # ``Headers(Headers)`` copies the normalised list: the shape stays untouched.
    response = httpx.Response(
        status, headers=shape.headers, stream=httpx.ByteStream(body), extensions=extensions, request=request
    )
    response.headers.encoding = shape.encoding
    # The state ``Response.read()`` leaves behind in ``__init__``: content set, stream consumed,
    # response closed (``__init__`` then resets the download counter to 0, as the stream path does).
    response._content = body
    response.is_stream_consumed = True
    response.is_closed = True
    return response


def body_response(
    status: int,
    headers: list[tuple[str, str]],
    body: bytes,
    *,
    extensions: dict[str, Any],
    request: httpx.Request,
) -> httpx.Response:
    """``httpx.Response(status, headers=…, content=body, …)``, already read and closed."""
    return shaped_response(
        status, response_shape(headers, body), body, extensions=extensions, request=request
    )
