"""Shared pieces of the labelling-page tests: a small audit directory and a server in a thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oracleproto.leakaudit.items import AuditItem, write_items
from oracleproto.leakaudit.label_server import LabelServer, LabelSession

#: A title and body that would run script or fetch an image if the page ever parsed them as HTML.
HOSTILE_TITLE = '<img src="http://evil.example/pixel.png" onerror="window.__pwned=1"><b>bold</b>'
HOSTILE_BODY = (
    "</pre><script>window.__pwned = 2</script>"
    '<iframe src="http://evil.example/frame"></iframe>\n<a href="javascript:alert(1)">click</a>'
)
#: The detector verdicts of the fixture; none of them may appear in anything the server sends.
VERDICTS = ["keep", "drop", "failed:content_policy", "keep", "drop"]
FIXED_NOW = datetime(2026, 3, 1, 12, 30, 0, tzinfo=UTC)


def audit_items() -> list[AuditItem]:
    """Five items (ids sort as i0..i4); item 2 carries hostile HTML in its title and body."""
    items = []
    for n, verdict in enumerate(VERDICTS):
        items.append(
            AuditItem(
                item_id=f"msim-q{n}-s0-c0-r{n}",
                model="sim/careful::r5::c4",
                question_id=f"Q-SECRET-{n}",
                sample=0,
                cutoff_date="2025-06-01",
                query=f"planted query {n}",
                title=HOSTILE_TITLE if n == 2 else f"Headline number {n}",
                url=f"https://news.example/{n}?a=1&b=<2>",
                published_date=None if n == 3 else f"2025-0{n + 1}-15",
                content=f"Snippet {n}: the vote was held.",
                raw_content=HOSTILE_BODY if n == 2 else (None if n == 4 else f"Body {n}\nline two"),
                detector_verdict=verdict,
            )
        )
    return items


def write_audit(audit_dir: Path) -> list[AuditItem]:
    """Write the fixture's ``audit.jsonl`` and ``audit.json`` into ``audit_dir``."""
    items = audit_items()
    write_items(audit_dir, items, {"run_id": "fixture", "seed": 0})
    return items


def open_session(audit_dir: Path, annotator: str = "alice") -> LabelSession:
    """A session whose labels are stamped with :data:`FIXED_NOW`."""
    return LabelSession.open(audit_dir, annotator, now=lambda: FIXED_NOW)


@contextmanager
def serving(session: LabelSession, **options: Any) -> Iterator[LabelServer]:
    """The label server on a free 127.0.0.1 port, served from a thread for the block's duration.

    ``options`` go to :class:`LabelServer` (``idle_timeout``, ``body_deadline``, ``on_error``).
    """
    server = LabelServer(session, 0, **options)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
