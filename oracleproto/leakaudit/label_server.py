"""The labelling page's server: standard-library HTTP on 127.0.0.1, a small JSON API, one HTML page.

The annotator sees one audit item at a time and answers leak / no-leak / unsure (paper §4.3). Each
POST is validated and appended with :func:`append_label` (fsynced) before the page hears "saved",
so closing the tab loses no label given (a note is saved with its label).

Blindness: the detector's verdict never leaves the process; ``item_source.PAGE_FIELDS`` is a
whitelist of what the page may see (``item_source.py`` says why the query is left out too). The page is
served with a Content-Security-Policy that allows only its own inline script and style (by hash)
and requests to its own origin, and requests whose Host or Origin is not this loopback server are
refused, so neither hostile page text nor another site open in the same browser can act on it.

Every malformed request gets its 4xx at once: the body is read against a short deadline (a body
that stops short of its Content-Length is refused, not waited for), and the JSON parse is bounded
(nesting, Python's limit on long integers) so no body can reach the "bug" path.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from pydantic import ValidationError

from oracleproto.errors import OracleprotoError
from oracleproto.leakaudit.item_source import load_page_items
from oracleproto.leakaudit.labels import (
    LABEL_VALUES,
    Label,
    append_label,
    check_annotator,
    labels_path,
    read_labels,
    utc_timestamp,
)
from oracleproto.primitives.loopback_http import (
    COMMON_HEADERS,
    HOST,
    IDLE_TIMEOUT_S,
    PAGE_HEADERS,
    allowed_hosts,
    host_allowed,
    page_policy,
)
from oracleproto.view.inert import with_inert

#: Largest request body accepted (a label plus a long note is well under this).
MAX_BODY = 256 * 1024
#: Longest note kept, in characters.
MAX_NOTE = 20_000
#: Seconds a connection may stay silent before its thread gives up (so shutdown never hangs).
REQUEST_TIMEOUT_S = IDLE_TIMEOUT_S
#: Seconds the whole body may take after the headers. The page sends headers and body together,
#: so a body still short after this has stopped short (or is being dripped): refused, not awaited.
BODY_DEADLINE_S = 1.0
#: How deep a label's JSON may nest: it is a flat object, so anything deeper is not a label.
MAX_DEPTH = 16


def page_html() -> str:
    """The labelling page (a package data file: inline CSS and JS, no external assets)."""
    html = resources.files("oracleproto.leakaudit").joinpath("label_page.html").read_text(encoding="utf-8")
    return with_inert(html)


def content_security_policy(html: str) -> str:
    """A CSP allowing exactly the page's own inline script and style and same-origin fetches."""
    return page_policy(html, connect="'self'")


def _too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """True when the JSON text ``raw`` opens more than ``limit`` arrays/objects inside each other.

    Checked before parsing, so a body nested 100,000 deep is one clear 400, never a RecursionError.
    Brackets inside strings do not count: strings are skipped with their escapes.
    """
    depth = 0
    in_string = False
    escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):  # ] }
            depth -= 1
    return False


def _shown(value: object) -> str:
    """A short repr of a value from a request, for an error message (never the whole of it)."""
    if isinstance(value, str | int | float | bool) or value is None:
        text = repr(value)
        return text if len(text) <= 80 else text[:77] + "…"
    return f"a JSON {'object' if isinstance(value, dict) else 'array'}"


class BadRequestError(Exception):
    """A request the API refuses; ``status`` and the message go back to the page as JSON."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class LabelSession:
    """One annotator's labelling of one audit directory: the items shown and the labels given."""

    audit_dir: Path
    annotator: str
    #: The items in ``audit.jsonl`` order, reduced to the fields the page may see.
    items: list[dict[str, str]]
    #: This annotator's labels so far, by item id (last one given wins).
    labels: dict[str, Label]
    #: Wall clock of ``labelled_at`` (injected so tests can fix it).
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _by_id: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_id = {item["item_id"]: item for item in self.items}

    @classmethod
    def open(
        cls,
        audit_dir: Path,
        annotator: str,
        *,
        now: Callable[[], datetime] | None = None,
        on_torn: Callable[[str], None] | None = None,
    ) -> LabelSession:
        """Load ``DIR/audit.jsonl`` and the annotator's labels (both validated)."""
        check_annotator(annotator)
        items = load_page_items(audit_dir)
        labels = read_labels(audit_dir, annotator, on_torn=on_torn)
        session = cls(audit_dir=audit_dir, annotator=annotator, items=items, labels=labels)
        if now is not None:
            session.now = now
        return session

    @property
    def labels_file(self) -> Path:
        """Where this annotator's labels are appended."""
        return labels_path(self.audit_dir, self.annotator)

    def progress(self) -> dict[str, int]:
        """``labelled`` (items of this audit with a label) and ``total``."""
        known = self._by_id
        with self._lock:
            labelled = sum(1 for item_id in self.labels if item_id in known)
        return {"labelled": labelled, "total": len(self.items)}

    def resume_index(self) -> int:
        """Position of the first unlabelled item (``total`` when every item has a label)."""
        with self._lock:
            for position, item in enumerate(self.items):
                if item["item_id"] not in self.labels:
                    return position
        return len(self.items)

    def refresh(self) -> None:
        """Re-read the labels file: labels another process added (an import, a second page) count."""
        with self._lock:
            # A torn last line was reported when the session opened; the next append cuts it.
            self.labels = read_labels(self.audit_dir, self.annotator, on_torn=lambda _message: None)

    def state(self) -> dict[str, Any]:
        """What the page needs at start: the item ids, this annotator's labels, where to resume."""
        self.refresh()
        known = self._by_id
        with self._lock:
            labels = {key: _label_view(value) for key, value in self.labels.items() if key in known}
        return {
            "annotator": self.annotator,
            "item_ids": [item["item_id"] for item in self.items],
            "labels": labels,
            "resume": self.resume_index(),
            **self.progress(),
        }

    def item(self, item_id: str) -> dict[str, str]:
        """One item as the page shows it; unknown ids are a 404."""
        found = self._by_id.get(item_id)
        if found is None:
            raise BadRequestError(f"no audit item {item_id!r} in this audit", HTTPStatus.NOT_FOUND)
        return found

    def submit(self, payload: object) -> dict[str, Any]:
        """Validate one label from the page, append it durably, return it with the new progress."""
        if not isinstance(payload, dict):
            raise BadRequestError("the body must be a JSON object {item_id, label, note}")
        unknown = sorted(set(payload) - {"item_id", "label", "note"})
        if unknown:
            shown = ", ".join(_shown(key) if len(key) > 40 else key for key in unknown[:5])
            raise BadRequestError(f"unknown field(s) {shown}; send item_id, label and note")
        item_id = payload.get("item_id")
        if not isinstance(item_id, str) or item_id not in self._by_id:
            raise BadRequestError(f"no audit item {_shown(item_id)} in this audit")
        value = payload.get("label")
        if not isinstance(value, str) or value not in LABEL_VALUES:
            raise BadRequestError(f"label must be one of {', '.join(LABEL_VALUES)}, not {_shown(value)}")
        note = payload.get("note", "")
        if not isinstance(note, str):
            raise BadRequestError("note must be a string")
        if len(note) > MAX_NOTE:
            raise BadRequestError(f"note is {len(note)} characters; keep it under {MAX_NOTE}")
        lone = next((ch for ch in note if "\ud800" <= ch <= "\udfff"), None)
        if lone is not None:
            # A JSON \ud800 escape: a broken half of a character, which no UTF-8 file can hold.
            raise BadRequestError(
                f"the note holds U+{ord(lone):04X}, half of a character (a lone surrogate); remove it"
            )
        try:
            label = Label(item_id=item_id, label=value, note=note, labelled_at=utc_timestamp(self.now()))
        except ValidationError as exc:
            raise BadRequestError(f"not a valid label: {exc.errors()[0]['msg']}") from None
        with self._lock:
            append_label(self.audit_dir, self.annotator, label)
            self.labels[item_id] = label
        return {"saved": _label_view(label), **self.progress()}


def _label_view(label: Label) -> dict[str, str]:
    return {"label": label.label, "note": label.note, "labelled_at": label.labelled_at}


class LabelServer(ThreadingHTTPServer):
    """A threading HTTP server on 127.0.0.1 carrying one :class:`LabelSession`."""

    # Handler threads are joined on close, so a label being saved when Ctrl-C arrives is finished.
    daemon_threads = False

    def __init__(
        self,
        session: LabelSession,
        port: int = 0,
        *,
        on_error: Callable[[str], None] | None = None,
        idle_timeout: float = REQUEST_TIMEOUT_S,
        body_deadline: float = BODY_DEADLINE_S,
    ) -> None:
        self.session = session
        self.on_error = on_error or (lambda _message: None)
        self.idle_timeout = idle_timeout
        self.body_deadline = body_deadline
        self.html = page_html()
        self.csp = content_security_policy(self.html)
        super().__init__((HOST, port), LabelRequestHandler)

    @property
    def port(self) -> int:
        """The bound port (the one picked by the OS when 0 was asked)."""
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{HOST}:{self.port}/"

    def allowed_hosts(self) -> frozenset[str]:
        """``Host`` values that name this server (a rebinding attack sends a foreign name)."""
        return allowed_hosts(self.port)


class LabelRequestHandler(BaseHTTPRequestHandler):
    """The routes: ``/`` (page), ``GET /api/state``, ``GET /api/item?id=``, ``POST /api/label``."""

    server: LabelServer
    # HTTP/1.0: one request per connection, so no idle keep-alive thread delays shutdown.
    protocol_version = "HTTP/1.0"
    server_version = "oracleproto-label"
    sys_version = ""

    def setup(self) -> None:
        """Arm the idle limit before the request line is read (the socket timeout applies to it)."""
        super().setup()
        self.connection.settimeout(self.server.idle_timeout)

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: the terminal shows the URL and the final count, not every request."""

    def _send(self, status: HTTPStatus, body: bytes, content_type: str, *, page: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in COMMON_HEADERS:
            self.send_header(name, value)
        if page:
            self.send_header("Content-Security-Policy", self.server.csp)
            for name, value in PAGE_HEADERS:
                self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: HTTPStatus, value: object) -> None:
        # ASCII JSON: any character of an item (a lone surrogate too) travels as a \u escape, so
        # no page text can make a response unencodable; the page's script gets it back as it was.
        body = json.dumps(value, ensure_ascii=True, sort_keys=True).encode("ascii")
        self._send(status, body, "application/json; charset=utf-8")

    def _error(self, status: HTTPStatus, message: str) -> None:
        self._json(status, {"error": message})

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a bad request line, an unknown method) as our JSON errors."""
        self.close_connection = True
        status = HTTPStatus(code)
        self._error(status, message or status.phrase)

    def _check_host(self) -> None:
        if not host_allowed(self.headers.get("Host"), self.server.port):
            raise BadRequestError(
                f"this server answers only to {HOST}:{self.server.port}", HTTPStatus.FORBIDDEN
            )

    def _dispatch(self, action: Callable[[], None]) -> None:
        try:
            self._check_host()
            action()
        except BadRequestError as exc:
            self._error(exc.status, str(exc))
        except OSError as exc:
            message = f"could not save the label: {exc.strerror or exc}"
            self.server.on_error(message)
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, message)
        except OracleprotoError as exc:  # the labels file was damaged while the server ran
            self.server.on_error(str(exc))
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, str(exc))
        except Exception as exc:  # a bug: say so on both ends rather than drop the connection
            message = f"internal error: {type(exc).__name__}: {exc} (a bug in oracleproto; please report it)"
            self.server.on_error(message)
            self._error(HTTPStatus.INTERNAL_SERVER_ERROR, message)

    def do_GET(self) -> None:
        """Serve the page or one of the read-only API routes."""
        self._dispatch(self._get)

    def do_HEAD(self) -> None:
        """As GET without the body."""
        self._dispatch(self._get)

    def do_POST(self) -> None:
        """Save one label."""
        self._dispatch(self._post)

    def _get(self) -> None:
        parts = urlsplit(self.path)
        session = self.server.session
        if parts.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.html.encode("utf-8"), "text/html; charset=utf-8", page=True)
        elif parts.path == "/api/state":
            self._json(HTTPStatus.OK, session.state())
        elif parts.path == "/api/item":
            ids = parse_qs(parts.query).get("id", [])
            if len(ids) != 1:
                raise BadRequestError("ask for one item: /api/item?id=ITEM_ID")
            self._json(HTTPStatus.OK, session.item(ids[0]))
        elif parts.path == "/api/label":
            raise BadRequestError("POST a label to /api/label", HTTPStatus.METHOD_NOT_ALLOWED)
        else:
            raise BadRequestError(f"no such page {parts.path!r}", HTTPStatus.NOT_FOUND)

    def _post(self) -> None:
        if urlsplit(self.path).path != "/api/label":
            raise BadRequestError("only /api/label accepts POST", HTTPStatus.METHOD_NOT_ALLOWED)
        origin = self.headers.get("Origin")
        # Browsers send Origin on cross-site POSTs; only this server's own page may label.
        if origin is not None and origin.removeprefix("http://") not in self.server.allowed_hosts():
            raise BadRequestError("labels are accepted only from the labelling page", HTTPStatus.FORBIDDEN)
        # A JSON content type cannot be sent cross-site without a CORS preflight, which we never grant.
        if self.headers.get_content_type() != "application/json":
            raise BadRequestError("send the label as application/json", HTTPStatus.UNSUPPORTED_MEDIA_TYPE)
        payload = _parse_body(self._read_body())
        self._json(HTTPStatus.OK, self.server.session.submit(payload))

    def _content_length(self) -> int:
        values = self.headers.get_all("Content-Length") or []
        if not values:
            # Chunked bodies are not taken: the page always sends a length, and a length bounds the read.
            raise BadRequestError("a Content-Length is required", HTTPStatus.LENGTH_REQUIRED)
        digits = values[0].strip().lstrip("0") or "0"
        if len(set(values)) != 1 or not (digits.isascii() and digits.isdigit()):
            raise BadRequestError(f"not a valid Content-Length: {_shown(', '.join(values))}")
        # Compared as text first: a length of thousands of digits is refused without converting it.
        length = int(digits) if len(digits) <= 12 else MAX_BODY + 1
        if length > MAX_BODY:
            raise BadRequestError(
                f"the body must be under {MAX_BODY} bytes", HTTPStatus.REQUEST_ENTITY_TOO_LARGE
            )
        return length

    def _read_body(self) -> bytes:
        """The body, read against :data:`BODY_DEADLINE_S` in all (not a timeout per read)."""
        length = self._content_length()
        deadline = time.monotonic() + self.server.body_deadline
        chunks: list[bytes] = []
        got = 0
        try:
            while got < length:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.connection.settimeout(left)
                # read1: what has arrived (at most one recv), so the deadline is checked in between.
                chunk = self.rfile.read1(length - got)
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        except TimeoutError:  # the deadline passed inside a read
            pass
        finally:
            self.connection.settimeout(self.server.idle_timeout)
        if got < length:
            raise BadRequestError(f"the body ended after {got} of its {length} bytes (Content-Length)")
        return b"".join(chunks)


def _parse_body(raw: bytes) -> object:
    """The JSON of a request body, or a 400 naming what is wrong with it."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequestError("the body is not UTF-8 JSON") from None
    if _too_deep(raw):
        raise BadRequestError(
            f"the body nests more than {MAX_DEPTH} levels deep; a label is a flat JSON object"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise BadRequestError("the body is not UTF-8 JSON") from None
    except ValueError:  # Python's limit on integer digits (int_max_str_digits)
        raise BadRequestError("the body holds a number too long to read; a label has no numbers") from None
    except RecursionError:  # unreachable after _too_deep; kept so a change there cannot give a 500
        raise BadRequestError("the body nests too deeply; a label is a flat JSON object") from None
