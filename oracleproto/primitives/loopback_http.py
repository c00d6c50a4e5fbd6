"""What every page server of ours on 127.0.0.1 shares: whom it answers, the headers it sends, idle limits.

``view --serve`` and ``audit label`` serve run data (model output, scraped pages) to a browser on
the same machine. Binding to loopback is not enough: a web page on another site can point its own
host name at 127.0.0.1 (DNS rebinding) and read the answers as same-origin, so a request is served
only when its ``Host`` names this server. The headers keep the page from being framed, sniffed into
another type or leaking its address, and a connection that sends nothing is closed after a while so
it cannot hold a thread.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

#: The only interface the servers bind to.
HOST = "127.0.0.1"
#: Names a browser on this machine may use for a loopback server (``[::1]`` as a URL writes it).
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
#: Seconds a connection may stay silent (before its request line or headers) before it is closed.
IDLE_TIMEOUT_S = 15.0

#: Headers on every response: no sniffing, no referrer, not readable cross-origin, never cached.
COMMON_HEADERS: tuple[tuple[str, str], ...] = (
    ("Cache-Control", "no-store"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
)
#: Headers on a served page besides its Content-Security-Policy: never inside a frame.
PAGE_HEADERS: tuple[tuple[str, str], ...] = (("X-Frame-Options", "DENY"),)


def allowed_hosts(port: int) -> frozenset[str]:
    """``Host`` values naming a loopback server on ``port`` (the bare name too when the port is 80)."""
    names = {f"{name}:{port}" for name in LOOPBACK_NAMES}
    if port == 80:  # a browser leaves the default port out of Host
        names.update(LOOPBACK_NAMES)
    return frozenset(names)


def host_allowed(value: str | None, port: int) -> bool:
    """True when the ``Host`` header ``value`` names this server (host names are case-insensitive)."""
    return value is not None and value.strip().lower() in allowed_hosts(port)


def inline_hashes(html: str, tag: str) -> list[str]:
    """CSP source expressions (``'sha256-…'``) of each bare ``<tag>…</tag>`` body in ``html``.

    Only bare ``<script>`` elements run, so data blocks (``<script type="application/json">``)
    are not matched, and need no hash: the policy does not apply to them.
    """
    bodies = re.findall(rf"<{tag}>(.*?)</{tag}>", html, flags=re.DOTALL)
    return [
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii") + "'"
        for body in bodies
    ]


def page_policy(html: str, *, connect: str = "'none'", img: str = "'none'", meta: bool = False) -> str:
    """A Content-Security-Policy allowing exactly the page's own inline scripts and styles (by hash).

    ``connect`` and ``img`` are the only other sources. ``meta=True`` gives the form a ``<meta>``
    element can carry (browsers ignore ``frame-ancestors`` there; a header must send it).
    """
    scripts = " ".join(inline_hashes(html, "script")) or "'none'"
    styles = " ".join(inline_hashes(html, "style")) or "'none'"
    parts: Iterable[str] = (
        "default-src 'none'",
        f"script-src {scripts}",
        f"style-src {styles}",
        f"connect-src {connect}",
        f"img-src {img}",
        "base-uri 'none'",
        "form-action 'none'",
    )
    policy = "; ".join(parts)
    return policy if meta else policy + "; frame-ancestors 'none'"
