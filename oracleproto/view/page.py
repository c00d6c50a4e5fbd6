"""The single self-contained HTML file: the packaged template with the document embedded as JSON."""

from __future__ import annotations

import base64
import gzip
import html
from importlib import resources
from pathlib import Path
from typing import Any

from oracleproto.errors import OracleprotoError
from oracleproto.primitives.fileio import SHARED_MODE, atomic_write_text
from oracleproto.primitives.loopback_http import page_policy
from oracleproto.primitives.oserrors import cannot_write
from oracleproto.view.document import document_json, json_text
from oracleproto.view.inert import visible_text, with_inert

TEMPLATE = "viewer.html"
DATA_MARK = "__DATA__"
TITLE_MARK = "__TITLE__"
CSP_MARK = "__CSP__"


class ViewError(OracleprotoError):
    """The viewer cannot be built or written (bad input, or an unwritable output)."""


def template_text() -> str:
    """The packaged viewer template (inline CSS and JS, no external asset), ``inert.js`` inserted."""
    return with_inert(resources.files("oracleproto.view").joinpath(TEMPLATE).read_text(encoding="utf-8"))


def meta_policy(template: str) -> str:
    """The page's own Content-Security-Policy: its inline script and style by hash, data: images.

    Hashes rather than 'unsafe-inline': were any text ever to escape the data block, a script it
    opened would not run. The data block itself is not script, so it needs no hash.
    """
    return page_policy(template, img="data:", meta=True)


#: Document parts the page carries gzip-packed and unpacks only when a view needs them.
PER_MODEL = ("details", "prompts")
SHARED = ("searches", "verdicts")


def _pack(value: Any) -> str:
    """gzip (mtime 0: the same run gives the same bytes) + base64 of the value's compact JSON."""
    raw = json_text(value).encode("utf-8")
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode("ascii")


def packed_document(document: dict[str, Any]) -> dict[str, Any]:
    """The document as embedded: trajectories and recordings packed per model (lazy, ~10x smaller)."""
    out = {k: v for k, v in document.items() if k not in PER_MODEL + SHARED}
    out["packed"] = {
        "models": {
            m["slug"]: _pack({part: document[part].get(m["slug"], {}) for part in PER_MODEL})
            for m in document["models"]
        },
        "recording": _pack({part: document[part] for part in SHARED}),
    }
    return out


def render_page(document: dict[str, Any], *, pack: bool = True) -> str:
    """The whole page: template, title and the document in a ``<script type="application/json">``."""
    page = template_text()
    title = f"oracleproto view · {document.get('facts', {}).get('run_id') or document.get('source')}"
    head, _, tail = page.partition(DATA_MARK)
    # Single quotes are CSP syntax and may stay raw inside the double-quoted attribute.
    head = head.replace(CSP_MARK, html.escape(meta_policy(page), quote=False).replace('"', "&quot;"))
    embedded = packed_document(document) if pack else document
    # Split once on the data mark so nothing in the data can be taken for a mark. The title is
    # plain text (no chips there): hidden characters are spelled out, lone surrogates too.
    return head.replace(TITLE_MARK, html.escape(visible_text(title))) + document_json(embedded) + tail


def write_page(text: str, out: Path) -> Path:
    """Write ``text`` to ``out`` atomically (a temporary sibling renamed over it): no partial file.

    The file is created with mode 0o666 for the kernel to apply the user's umask, as for any file
    the user makes: a page meant to be shared is readable as their other files are.
    """
    try:
        atomic_write_text(out, text, mode=SHARED_MODE)
    except OSError as exc:
        raise ViewError(cannot_write(out, exc)) from None
    return out
