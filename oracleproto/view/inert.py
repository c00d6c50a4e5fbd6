"""The shared inert-text script of our pages, and its plain-text counterpart for places without a DOM.

``inert.js`` (package data) renders strangers' text as text nodes with a visible chip for every
character that could act on the page (bidi controls, invisible characters, controls, lone
surrogates, bytes that were not UTF-8). The viewer and the labelling page both carry it, inserted
at :data:`MARK`, so the two pages cannot drift apart. :func:`visible_text` does the same for text
that must stay a plain string (the page's ``<title>``), and makes it encodable as UTF-8.
"""

from __future__ import annotations

import unicodedata
from importlib import resources

#: Where a page's inline script receives ``inert.js`` (a comment, so an unfilled page still parses).
MARK = "/*__INERT_JS__*/"
#: Unicode categories that never show as themselves: controls, format, surrogates, line separators.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_KEPT = frozenset("\t\n\r")


def inert_script() -> str:
    """The text of ``inert.js``."""
    return resources.files("oracleproto.view").joinpath("inert.js").read_text(encoding="utf-8")


def with_inert(html: str) -> str:
    """``html`` with ``inert.js`` in place of its one :data:`MARK` (ValueError if it has none)."""
    if html.count(MARK) != 1:
        raise ValueError(f"the page template must hold {MARK} exactly once")
    return html.replace(MARK, inert_script())


def visible_text(text: str) -> str:
    """``text`` with each hidden character written as ``<U+XXXX>`` (what the chips show)."""
    if text.isprintable():  # the common case: nothing to do
        return text
    return "".join(
        f"<U+{ord(ch):04X}>" if ch not in _KEPT and unicodedata.category(ch) in _HIDDEN else ch for ch in text
    )
