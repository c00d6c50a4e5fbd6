"""Hostile Unicode for the page tests, and how a test reads what a browser actually laid out.

Both pages (the viewer and the labelling page) must show strangers' text inert: the checks here
read the DOM text and the position of every character on screen (``Range.getBoundingClientRect``),
never a screenshot, so "the same visual order as without the control character" is a comparison
of x coordinates.
"""

from __future__ import annotations

from typing import Any

RLO = "\u202e"
#: The classic spoof: shown raw, this reads "report" + "exe.jpg" reversed to look like an image.
SPOOFED_TITLE = f"report{RLO}gpj.exe"
PLAIN_TITLE = "reportgpj.exe"
SPOOFED_URL = f"https://files.example/{RLO}gpj.exe"
#: A URL whose path holds Hebrew: its parts must stay in order around the slashes.
HEBREW_URL = "https://news.example/\u05e9\u05dc\u05d5\u05dd/\u05e2\u05d5\u05dc\u05dd?q=1"
HEBREW = "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd"  # "hello world"
ARABIC = "\u0645\u0631\u062d\u0628\u0627"
#: Persian with a zero-width non-joiner inside a word: normal text, must stay unmarked.
PERSIAN_ZWNJ = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
EMOJI_ZWJ = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # a family: joiners that are text
HEART = "\u2764\ufe0f"  # one variation selector after a base: text
#: A run of variation selectors after an emoji can smuggle data: all but the first are marked.
SMUGGLED = "\U0001f600" + "\ufe00\ufe01\ufe02\ufe03"
#: Characters each shown as a chip, with the code the chip shows (pairs: ruff takes lone surrogates
#: for equal dict keys).
HIDDEN_CHIPS: tuple[tuple[str, str], ...] = (
    ("\x00", "U+0000"),
    ("\x1b", "U+001B"),
    ("\x85", "U+0085"),
    ("\u200b", "U+200B"),
    ("\u200e", "U+200E"),
    ("\u2066", "U+2066"),
    ("\u2069", "U+2069"),
    ("\u061c", "U+061C"),
    ("\u2028", "U+2028"),
    ("\ufeff", "U+FEFF"),
    ("\U000e0041", "U+E0041"),  # an invisible tag character ("A")
    ("\ud800", "U+D800"),  # a lone surrogate
    ("\udcff", "0xFF"),  # a byte that was not UTF-8 (surrogateescape)
)
HIDDEN = dict(HIDDEN_CHIPS)
#: One string with every hidden character, each between two letters.
HIDDEN_TEXT = "".join(f"{chr(ord('a') + i)}{ch}" for i, ch in enumerate(HIDDEN)) + "z"
#: What the page's text reads for it: each hidden character replaced by its chip.
HIDDEN_SHOWN = "".join(f"{chr(ord('a') + i)}<{code}>" for i, code in enumerate(HIDDEN.values())) + "z"

# For each character of an element's text outside chips: the character, its left and top edge.
_GLYPHS = """
(root) => {
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (node.parentElement.closest(".inert")) continue;
    for (let i = 0; i < node.data.length; ) {
      const cp = node.data.codePointAt(i), n = cp > 0xffff ? 2 : 1;
      const range = document.createRange();
      range.setStart(node, i);
      range.setEnd(node, i + n);
      const rect = range.getBoundingClientRect();
      if (rect.width > 0) out.push([String.fromCodePoint(cp), rect.left, rect.top]);
      i += n;
    }
  }
  return out;
}
"""


def glyphs(locator: Any) -> list[tuple[str, float, float]]:
    """Each visible character of the element (chips left out) with its left and top on screen."""
    return [tuple(g) for g in locator.evaluate(_GLYPHS)]  # type: ignore[misc]


def visual_order(locator: Any) -> str:
    """The element's one-line text as the eye reads it, left to right (chips left out)."""
    placed = glyphs(locator)
    tops = {round(top) for _, _, top in placed}
    assert len(tops) == 1, f"expected one line, the text wraps over {len(tops)}"
    return "".join(ch for ch, _, _ in sorted(placed, key=lambda g: g[1]))


def chips(locator: Any) -> list[str]:
    """The chips' texts inside the element, in DOM order."""
    return [str(t) for t in locator.locator(".inert").all_text_contents()]


def box(locator: Any) -> dict[str, float]:
    """The element's bounding box on screen."""
    found = locator.bounding_box()
    assert found is not None, "the element is not rendered"
    return dict(found)


def raw_hidden_in_dom(page: Any) -> list[str]:
    """Hidden characters that reached the page's text as themselves (should be none)."""
    # The page's scripts (the viewer's JSON data block among them) are not shown text.
    shown = """() => {
      const clone = document.body.cloneNode(true);
      clone.querySelectorAll("script").forEach((s) => s.remove());
      return clone.textContent;
    }"""
    found: list[str] = page.evaluate(
        f"(chars) => {{ const text = ({shown})(); return chars.filter((ch) => text.includes(ch)); }}",
        [ch for ch in [*HIDDEN, RLO] if ch not in ("\ud800", "\udcff")],
    )
    lone: bool = page.evaluate(f"() => /\\p{{Cs}}/u.test(({shown})())")
    return found + (["lone surrogate"] if lone else [])
