"""The labelling page in headless Chromium when things go wrong: a next item that fails to load,
keyboard users on the buttons, 400% zoom, and strangers' Unicode in the items.

Layout is checked where the browser put things (``elementFromPoint``, character boxes), never on
screenshots; the page stays blind (no response it gets names a verdict) and local throughout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oracleproto.errors import OracleprotoError
from oracleproto.leakaudit.item_source import PAGE_FIELDS
from oracleproto.leakaudit.label_server import LabelSession
from tests.bidi_layout import (
    ARABIC,
    EMOJI_ZWJ,
    HEBREW,
    HEBREW_URL,
    HIDDEN,
    HIDDEN_SHOWN,
    HIDDEN_TEXT,
    PERSIAN_ZWNJ,
    PLAIN_TITLE,
    RLO,
    SPOOFED_TITLE,
    SPOOFED_URL,
    chips,
    raw_hidden_in_dom,
    visual_order,
)
from tests.browser import ConfinedPage
from tests.leakaudit.label_helpers import FIXED_NOW, serving, write_audit
from tests.leakaudit.test_label_page_browser import at

IDS = [f"msim-q{n}-s0-c0-r{n}" for n in range(5)]
#: What a 1280 x 720 window shows at 400% zoom, in CSS pixels (zoom divides the layout viewport).
ZOOMED = {"width": 320, "height": 180}


class FailingSession(LabelSession):
    """A session whose server cannot give some items (a file gone, a disk error): HTTP 500."""

    broken: frozenset[str] = frozenset()

    def item(self, item_id: str) -> dict[str, str]:
        """The item, or the failure the page must survive."""
        if item_id in self.broken:
            raise OracleprotoError("the item could not be read (planted failure)")
        return super().item(item_id)


def _lines(audit_dir: Path) -> list[tuple[str, str]]:
    text = (audit_dir / "labels" / "alice.jsonl").read_text(encoding="utf-8")
    return [(row["item_id"], row["label"]) for row in map(json.loads, text.splitlines())]


def _bodies(page: Any) -> list[str]:
    bodies: list[str] = []
    page.on("response", lambda response: bodies.append(response.text()))
    return bodies


def test_a_saved_label_stays_saved_when_the_next_item_fails_and_skip_goes_past_it(
    browser_page: ConfinedPage, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    write_audit(tmp_path)
    session = FailingSession.open(tmp_path, "alice", now=lambda: FIXED_NOW)
    session.broken = frozenset({IDS[1]})
    page: Any = browser_page.page
    bodies = _bodies(page)
    with serving(session) as server:
        page.goto(server.url)
        at(page, "Item 1 of 5")
        page.keyboard.press("l")
        at(page, "Item 2 of 5")
        expect(page.locator("#status")).to_have_text(f"Saved “leak” for {IDS[0]}.")
        expect(page.locator("#failed")).to_be_visible()
        expect(page.locator("#item")).to_be_hidden()
        expect(page.locator("#failed-message")).to_have_text(
            f"Item {IDS[1]}: the item could not be read (planted failure)"
        )
        expect(page.locator("#btn-leak")).to_have_attribute("aria-disabled", "true")
        page.keyboard.press("n")  # an item the annotator could not see gets no label

        page.keyboard.press("ArrowRight")  # Skip goes past the item that fails
        at(page, "Item 3 of 5")
        expect(page.locator("#item-id")).to_have_text(IDS[2])
        expect(page.locator("#failed")).to_be_hidden()
        page.keyboard.press("b")  # and Back returns to it, asking again
        at(page, "Item 2 of 5")
        expect(page.locator("#failed")).to_be_visible()
        page.click("#btn-back")
        at(page, "Item 1 of 5")
        expect(page.locator("#current")).to_have_text("leak")
        expect(page.locator("#labelled")).to_have_text("1 of 5 labelled")

    assert _lines(tmp_path) == [(IDS[0], "leak")]
    assert all("detector" not in body and "failed:" not in body for body in bodies)
    assert browser_page.network.refused == []


def test_enter_on_a_button_labels_and_keeps_the_focus_there(
    browser_page: ConfinedPage, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    write_audit(tmp_path)
    page: Any = browser_page.page
    with serving(LabelSession.open(tmp_path, "alice", now=lambda: FIXED_NOW)) as server:
        page.goto(server.url)
        at(page, "Item 1 of 5")
        page.focus("#btn-no-leak")
        page.keyboard.press("Enter")
        at(page, "Item 2 of 5")
        assert page.evaluate("document.activeElement.id") == "btn-no-leak"
        expect(page.locator("#btn-no-leak")).to_have_attribute("aria-disabled", "false")
        page.keyboard.press("Enter")  # still on the button: the next Enter labels the next item
        at(page, "Item 3 of 5")
        page.focus("#btn-next")
        page.keyboard.press("Enter")
        at(page, "Item 4 of 5")
        assert page.evaluate("document.activeElement.id") == "btn-next"
    assert _lines(tmp_path) == [(IDS[0], "no-leak"), (IDS[1], "no-leak")]


# An element is seen when, scrolled to, the point just inside its top-left corner shows it (and not
# a bar laid over it).
_SEEN = """(selector) => {
  const element = document.querySelector(selector);
  element.scrollIntoView({ block: "start", inline: "start" });
  const rect = element.getBoundingClientRect();
  const hit = document.elementFromPoint(rect.left + 4, rect.top + 4);
  return hit !== null && (hit === element || element.contains(hit));
}"""


def test_at_400_percent_zoom_the_item_and_the_buttons_can_be_seen(
    browser_page: ConfinedPage, tmp_path: Path
) -> None:
    write_audit(tmp_path)
    page: Any = browser_page.page
    controls = "(s) => getComputedStyle(document.querySelector(s)).position"
    with serving(LabelSession.open(tmp_path, "alice", now=lambda: FIXED_NOW)) as server:
        page.goto(server.url)
        at(page, "Item 1 of 5")
        assert page.evaluate(controls, ".controls") == "fixed"  # at 100% the buttons stay in view
        page.set_viewport_size(ZOOMED)
        for selector in ("#cutoff", "#url", "#title", "#snippet", "#page-body", "#btn-leak", "#note"):
            assert page.evaluate(_SEEN, selector), f"{selector} is covered or off screen at 400% zoom"
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        assert page.evaluate(controls, ".controls") == "static"
        page.click("#btn-unsure")  # Playwright clicks only what is visible and not covered
        at(page, "Item 2 of 5")
    assert _lines(tmp_path) == [(IDS[0], "unsure")]


def _item(item_id: str, **fields: str) -> dict[str, str]:
    item = dict.fromkeys(PAGE_FIELDS, "")
    item.update(item_id=item_id, cutoff_date="2025-06-01", **fields)
    return item


@pytest.fixture
def unicode_session(tmp_path: Path) -> LabelSession:
    """Three items whose texts carry spoofing, hidden characters and right-to-left scripts."""
    items = [
        _item(
            "u-0", title=SPOOFED_TITLE, url=SPOOFED_URL, content=HIDDEN_TEXT, raw_content=f"{ARABIC}\nplain"
        ),
        _item("u-1", title=PLAIN_TITLE, url=HEBREW_URL, content=f"{PERSIAN_ZWNJ} {EMOJI_ZWJ}"),
        _item("u-2", title=HEBREW, published_date=f"2025{RLO}-01"),
    ]
    return LabelSession(audit_dir=tmp_path, annotator="alice", items=items, labels={}, now=lambda: FIXED_NOW)


def test_page_text_is_inert_marked_and_isolated(
    browser_page: ConfinedPage, unicode_session: LabelSession
) -> None:
    from playwright.sync_api import expect

    page: Any = browser_page.page
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    title, url = page.locator("#title"), page.locator("#url")
    with serving(unicode_session) as server:
        page.goto(server.url)
        at(page, "Item 1 of 3")
        expect(title).to_have_text("report<U+202E>gpj.exe")
        spoofed_order = visual_order(title)
        assert spoofed_order == PLAIN_TITLE  # the override shows as a chip and reorders nothing
        assert "RIGHT-TO-LEFT OVERRIDE" in title.locator(".inert").get_attribute("title")
        assert visual_order(url) == "https://files.example/gpj.exe"
        expect(page.locator("#snippet")).to_have_text(HIDDEN_SHOWN)
        assert chips(page.locator("#snippet")) == [f"<{code}>" for code in HIDDEN.values()]
        assert raw_hidden_in_dom(page) == []

        page.keyboard.press("ArrowRight")
        at(page, "Item 2 of 3")
        assert visual_order(title) == spoofed_order  # the same title without the override
        parts = HEBREW_URL.split("/")
        assert visual_order(url) == (
            "https://news.example/" + parts[3][::-1] + "/" + parts[4].split("?")[0][::-1] + "?q=1"
        )
        expect(page.locator("#snippet")).to_have_text(f"{PERSIAN_ZWNJ} {EMOJI_ZWJ}")  # joiners that are text
        assert chips(page.locator("#snippet")) == []

        page.keyboard.press("ArrowRight")
        at(page, "Item 3 of 3")
        assert visual_order(title) == HEBREW[::-1]  # right to left, inside its own isolate
        assert title.evaluate("(e) => getComputedStyle(e).direction") == "rtl"
        expect(page.locator("#published")).to_have_text("2025<U+202E>-01")
        page.fill("#note", f"ok{RLO}ko")  # the annotator's own note is shown inert too
        page.keyboard.press("Escape")
        page.keyboard.press("u")
        at(page, "All 3 items")
        page.keyboard.press("b")
        at(page, "Item 3 of 3")
        expect(page.locator("#current")).to_have_text("unsure — ok<U+202E>ko")
        assert raw_hidden_in_dom(page) == []
    assert unicode_session.labels["u-2"].note == f"ok{RLO}ko"  # saved as typed
    assert errors == []
    assert browser_page.network.refused == []
