"""The leaderboard as one self-contained HTML file, by the viewer's rules.

The packaged template ``leaderboard.html`` (inline CSS and JS, ``inert.js`` inserted) gets the
document as JSON in a ``<script type="application/json">`` block, escaped so no text can close it
(``view.document.document_json``), and a Content-Security-Policy ``<meta>`` that allows exactly its
own inline script and style by hash and nothing else: no network, no image, no frame, and a script
that escaped the data block would not run. Strangers' text (model names, run ids, notes) is shown
inert and marked by ``inert.js``, as in the viewer.
"""

from __future__ import annotations

import html
from importlib import resources
from typing import Any

from oracleproto.primitives.loopback_http import page_policy
from oracleproto.view.document import document_json
from oracleproto.view.inert import visible_text, with_inert
from oracleproto.view.page import CSP_MARK, DATA_MARK, TITLE_MARK

TEMPLATE = "leaderboard.html"


def template_text() -> str:
    """The packaged template with ``inert.js`` in place."""
    text = resources.files("oracleproto.leaderboard").joinpath(TEMPLATE).read_text(encoding="utf-8")
    return with_inert(text)


def render_board_page(document: dict[str, Any]) -> str:
    """The whole page: template, title, policy and the document."""
    page = template_text()
    runs = ", ".join(str(r.get("run_id")) for r in document.get("runs", []))
    title = f"oracleproto leaderboard · {runs}"
    head, _, tail = page.partition(DATA_MARK)
    # No image source at all: the page draws with inline SVG, which needs none.
    policy = page_policy(page, img="'none'", meta=True)
    head = head.replace(CSP_MARK, html.escape(policy, quote=False).replace('"', "&quot;"))
    # Split once on the data mark, so nothing in the data can be taken for a mark; the title is
    # plain text, hidden characters spelled out.
    return head.replace(TITLE_MARK, html.escape(visible_text(title))) + document_json(document) + tail
