"""Capture files: every HTTP exchange of a harness, one JSON object per line.

Fields of a line (``docs/design/architecture.md``, "Conformance captures"): ``seq`` (unique integer),
``t`` (server clock,
seconds), ``method``, ``path``, ``headers`` and ``resp_headers`` (lists of ``[name, value]``),
``body_b64`` and ``resp_b64`` (standard base64 of the exact bytes), ``status`` (HTTP status, 0 when
the connection was dropped without an answer), ``served`` and ``key`` (the capturing proxy's notes).
Captures come from strangers: every defect is reported with the file, the line and the field, and
bodies stay the exact bytes that were sent.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from oracleproto.conformance.mask import mask_api_key, redact_header
from oracleproto.conformance.text import clip, safe_text
from oracleproto.errors import OracleprotoError

Headers = tuple[tuple[str, str], ...]
_HOW = (
    "each line must be one JSON object with the fields seq, t, method, path, headers, body_b64, "
    "status, resp_headers, resp_b64, served, key"
)


class CaptureError(OracleprotoError):
    """A capture file cannot be read; the message names the file, the line and the field."""


@dataclass(frozen=True)
class CaptureExchange:
    """One captured HTTP exchange, bodies as the exact bytes sent and received."""

    seq: int
    t: float
    method: str
    path: str
    headers: Headers
    body: bytes
    status: int
    resp_headers: Headers
    resp_body: bytes
    served: str
    key: str | None
    #: 1-based line of the capture file (0 for an exchange not read from a file); not compared.
    line: int = dataclasses.field(default=0, compare=False)


class _Line:
    """Typed access to the fields of one parsed line, failing with file, line and field."""

    def __init__(self, where: str, obj: dict[str, Any]) -> None:
        self.where = where
        self.obj = obj

    def fail(self, field: str, problem: str) -> CaptureError:
        return CaptureError(f"{self.where}, field {field!r}: {problem}; {_HOW}")

    def get(self, field: str) -> Any:
        if field not in self.obj:
            raise self.fail(field, "missing")
        return self.obj[field]

    def integer(self, field: str, low: int, high: int) -> int:
        value = self.get(field)
        if type(value) is not int or not low <= value <= high:
            raise self.fail(field, f"expected an integer from {low} to {high}, got {_shown(value)}")
        return value

    def number(self, field: str) -> float:
        value = self.get(field)
        if type(value) not in (int, float) or not math.isfinite(value):
            raise self.fail(field, f"expected a finite number, got {_shown(value)}")
        return float(value)

    def string(self, field: str) -> str:
        value = self.get(field)
        if not isinstance(value, str):
            raise self.fail(field, f"expected a string, got {_shown(value)}")
        return value

    def optional_string(self, field: str) -> str | None:
        value = self.get(field)
        if value is not None and not isinstance(value, str):
            raise self.fail(field, f"expected a string or null, got {_shown(value)}")
        return value

    def pairs(self, field: str) -> Headers:
        value = self.get(field)
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list of [name, value] pairs, got {_shown(value)}")
        out: list[tuple[str, str]] = []
        for index, item in enumerate(value):
            if not (isinstance(item, list) and len(item) == 2 and all(isinstance(s, str) for s in item)):
                raise self.fail(field, f"item {index} is not a [name, value] pair of strings: {_shown(item)}")
            out.append((item[0], item[1]))
        return tuple(out)

    def base64(self, field: str) -> bytes:
        value = self.string(field)
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise self.fail(
                field, f"not valid base64 ({exc}); encode the exact bytes as standard base64 with padding"
            ) from None


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str) if value is not None else "null"
    return safe_text(clip(text, 60))


def _parse_line(where: str, number: int, raw: bytes) -> CaptureExchange | None:
    """Line ``number`` as an exchange; None for a blank line."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CaptureError(
            f"{where}: not valid UTF-8 (byte 0x{raw[exc.start]:02X} at column {exc.start + 1}); {_HOW}"
        ) from None
    if not text.strip():
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CaptureError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); {_HOW}") from None
    except RecursionError:
        raise CaptureError(f"{where}: JSON nested too deeply to read; {_HOW}") from None
    if not isinstance(obj, dict):
        raise CaptureError(f"{where}: expected a JSON object, got {_shown(obj)}; {_HOW}")
    line = _Line(where, obj)
    return CaptureExchange(
        seq=line.integer("seq", 0, 2**63 - 1),
        t=line.number("t"),
        method=line.string("method"),
        path=line.string("path"),
        headers=line.pairs("headers"),
        body=line.base64("body_b64"),
        status=line.integer("status", 0, 999),
        resp_headers=line.pairs("resp_headers"),
        resp_body=line.base64("resp_b64"),
        served=line.string("served"),
        key=line.optional_string("key"),
        line=number,
    )


def read_capture(path: Path) -> list[CaptureExchange]:
    """Every exchange of the capture at ``path``, in file order; ``CaptureError`` on any defect."""
    name = safe_text(str(path))
    try:
        data = path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or exc.__class__.__name__
        raise CaptureError(f"cannot read capture {name}: {reason}; give the path of a capture file") from None
    lines = data.split(b"\n")
    exchanges: list[CaptureExchange] = []
    seen: dict[int, int] = {}
    for number, raw in enumerate(lines, start=1):
        where = f"{name} line {number}"
        try:
            exchange = _parse_line(where, number, raw)
        except CaptureError as exc:
            if number == len(lines) and raw.strip():
                raise CaptureError(
                    f"{exc} (the last line has no newline: the file may be truncated)"
                ) from None
            raise
        if exchange is None:
            continue
        if exchange.seq in seen:
            raise CaptureError(
                f"{where}, field 'seq': {exchange.seq} was already used on line {seen[exchange.seq]}; "
                "every exchange needs its own seq"
            )
        seen[exchange.seq] = number
        exchanges.append(exchange)
    if not exchanges:
        raise CaptureError(f"capture {name} is empty; {_HOW}")
    return exchanges


def exchange_line(exchange: CaptureExchange) -> str:
    """``exchange`` as one capture line (no newline); ASCII only, so any byte of it is safe to store."""
    obj = {
        "seq": exchange.seq,
        "t": exchange.t,
        "method": exchange.method,
        "path": exchange.path,
        "headers": [list(p) for p in exchange.headers],
        "body_b64": base64.b64encode(exchange.body).decode("ascii"),
        "status": exchange.status,
        "resp_headers": [list(p) for p in exchange.resp_headers],
        "resp_b64": base64.b64encode(exchange.resp_body).decode("ascii"),
        "served": exchange.served,
        "key": exchange.key,
    }
    return json.dumps(obj)


class CaptureWriter:
    """Append exchanges to a capture file: one flushed line each, thread-safe, credentials masked.

    Masking happens here, not in the caller: ``Authorization`` keeps its scheme (``Bearer
    <redacted>``), key headers become ``<redacted>``, a top-level ``api_key`` in a JSON body becomes
    ``"<redacted>"`` (nothing else in the body changes). ``seq`` counts from 1 in write order. A
    failed write (disk full) is kept in ``error`` and ends the capture: a capture with a hole would
    pair the wrong exchanges later, so nothing more is written.
    """

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._seq = 0
        self.error: str | None = None
        name = safe_text(str(path))
        try:
            # Appending to an earlier capture would repeat its seq numbers: refuse rather than mix.
            if path.exists() and path.stat().st_size > 0:
                raise CaptureError(
                    f"capture file {name} already exists and is not empty; "
                    "give a new file name or remove the old capture"
                )
            self._stream: BinaryIO = path.open("ab")
        except OSError as exc:
            reason = exc.strerror or exc.__class__.__name__
            raise CaptureError(f"cannot write capture {name}: {reason}; give a writable file path") from None

    def write(
        self,
        *,
        method: str,
        path: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        status: int,
        resp_headers: Iterable[tuple[str, str]],
        resp_body: bytes,
    ) -> CaptureExchange | None:
        """Store one exchange (served ``upstream``, no key); the exchange as written, None once failed."""
        masked_headers = tuple((name, redact_header(name, value)) for name, value in headers)
        masked_body = mask_api_key(body)
        with self._lock:
            # Closed: a request still in flight when the server stopped is not part of the capture.
            if self.error is not None or self._stream.closed:
                return None
            self._seq += 1
            exchange = CaptureExchange(
                seq=self._seq,
                t=self._clock(),
                method=method,
                path=path,
                headers=masked_headers,
                body=masked_body,
                status=status,
                resp_headers=tuple(resp_headers),
                resp_body=resp_body,
                served="upstream",
                key=None,
            )
            try:
                self._stream.write(exchange_line(exchange).encode("ascii") + b"\n")
                self._stream.flush()
            except OSError as exc:
                reason = exc.strerror or exc.__class__.__name__
                self.error = (
                    f"writing capture {safe_text(str(self.path))} failed at exchange "
                    f"{exchange.seq}: {reason}; the capture stops there"
                )
                return None
        return exchange

    def close(self) -> None:
        """Close the file (a failed flush at close is reported in ``error`` like a failed write)."""
        with self._lock:
            try:
                self._stream.close()
            except OSError as exc:
                if self.error is None:
                    self.error = f"closing capture {safe_text(str(self.path))} failed: {exc.strerror}"
