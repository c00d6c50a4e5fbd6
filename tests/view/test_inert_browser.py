"""Strangers' Unicode in the viewer, in headless Chromium: shown inert, marked, in its own isolate.

A result title holding U+202E must read in the same visual order as the same title without it,
plus a visible marker; every hidden character (controls, invisible and bidi characters, lone
surrogates, bytes that were not UTF-8) shows as a chip and never reaches the page's text as itself;
Hebrew, Arabic, Persian with its joiners and emoji sequences stay as they are. Checked on the DOM's
text and on where the browser put each character, not on screenshots.
"""

from __future__ import annotations

import copy
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.view import render_page, write_page
from oracleproto.view.samples import boxed_span, utf16_span
from tests.bidi_layout import (
    ARABIC,
    EMOJI_ZWJ,
    HEART,
    HEBREW,
    HEBREW_URL,
    HIDDEN,
    HIDDEN_SHOWN,
    HIDDEN_TEXT,
    PERSIAN_ZWNJ,
    PLAIN_TITLE,
    RLO,
    SMUGGLED,
    SPOOFED_TITLE,
    SPOOFED_URL,
    box,
    chips,
    glyphs,
    raw_hidden_in_dom,
    visual_order,
)
from tests.browser import ConfinedPage

QUESTION = 2  # demo-09: its first sample searched, and its results have detector reasons
FINAL = "\U0001f600 " + HIDDEN_TEXT + r" \boxed{B}"
#: A flood of hidden characters: a run is one chip with a count, and past 1000 chips the rest are
#: U+FFFD text with one chip saying how many (the page must not grow a million elements).
FLOOD = "\u200b" * 5000 + "x" + "a\x00" * 1200


def unicode_document(document: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The demo document with hostile Unicode in every kind of field the sample page shows."""
    doc = copy.deepcopy(document)
    slug = doc["models"][0]["slug"]
    doc["models"][0]["name"] = f"model{RLO}eman"
    question = doc["questions"][QUESTION]
    question["event"] = HIDDEN_TEXT
    question["options"][:2] = [ARABIC, SPOOFED_TITLE]
    detail = doc["details"][slug][question["id"]][0]
    detail["final_answer_raw"] = FINAL
    detail["boxed"] = utf16_span(FINAL, boxed_span(FINAL))
    recorded = detail["recorded_searches"][0]
    results = doc["searches"][recorded["search_key"]]["results"]
    results[0].update(title=SPOOFED_TITLE, url=SPOOFED_URL)
    results[0]["content"] = f"{PERSIAN_ZWNJ} {EMOJI_ZWJ} {HEART} {SMUGGLED}"
    results[1].update(title=PLAIN_TITLE, url=HEBREW_URL, content=FLOOD)
    results[2]["title"] = HEBREW
    doc["verdicts"][recorded["detector_keys"][0]]["reason"] = HIDDEN_TEXT
    return doc, question["id"]


def _open_sample(browser_page: ConfinedPage, path: Path, qid: str) -> tuple[Any, list[str]]:
    page: Any = browser_page.page
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri() + f"#/sample/0/{qid}/0")
    page.wait_for_selector("#sample")
    page.locator("#sample details.search summary").first.click()
    page.wait_for_selector("#sample details.search .result")
    return page, errors


def _kv(page: Any, name: str) -> Any:
    return (
        page.locator("#sample .kv tr")
        .filter(has=page.locator("td:first-child", has_text=name))
        .locator("td:nth-child(2)")
    )


def test_hostile_unicode_is_shown_inert_and_marked(
    browser_page: ConfinedPage, demo_document: dict[str, Any], tmp_path: Path
) -> None:
    doc, qid = unicode_document(demo_document)
    path = write_page(render_page(doc), tmp_path / "unicode.html")
    page, errors = _open_sample(browser_page, path, qid)
    result = page.locator("#sample details.search").first.locator(".result")

    # A spoofed title reads as the plain one does, with the override shown between its parts.
    spoofed, plain = result.nth(0).locator(".title"), result.nth(1).locator(".title")
    assert spoofed.text_content() == "report<U+202E>gpj.exe"
    assert visual_order(spoofed) == visual_order(plain) == PLAIN_TITLE
    chip = box(spoofed.locator(".inert"))
    placed = {ch: left for ch, left, _ in glyphs(spoofed)}
    assert placed["t"] < chip["x"] < placed["g"]
    assert "RIGHT-TO-LEFT OVERRIDE" in spoofed.locator(".inert").get_attribute("title")
    url = result.nth(0).locator(".url")
    assert url.text_content() == "https://files.example/<U+202E>gpj.exe"
    assert visual_order(url) == "https://files.example/gpj.exe"

    # Hebrew reads right to left inside its own isolate; a URL's parts stay in order around it.
    hebrew = result.nth(2).locator(".title")
    assert hebrew.text_content() == HEBREW and chips(hebrew) == []
    assert visual_order(hebrew) == HEBREW[::-1]
    assert hebrew.evaluate("(e) => [getComputedStyle(e).direction, getComputedStyle(e).unicodeBidi]") == [
        "rtl",
        "isolate",
    ]
    assert box(hebrew)["x"] + box(hebrew)["width"] <= box(result.nth(2).locator(".muted").first)["x"]
    shown_url = result.nth(1).locator(".url")
    assert shown_url.text_content() == HEBREW_URL
    path_parts = HEBREW_URL.split("/")
    assert visual_order(shown_url) == (
        "https://news.example/" + path_parts[3][::-1] + "/" + path_parts[4].split("?")[0][::-1] + "?q=1"
    )

    # Joiners inside Persian words and emoji sequences are text; a run of selectors is marked.
    content = result.nth(0).locator("pre").first
    assert (
        content.text_content()
        == f"{PERSIAN_ZWNJ} {EMOJI_ZWJ} {HEART} \U0001f600\ufe00<U+FE01><U+FE02><U+FE03>"
    )
    assert chips(content) == ["<U+FE01>", "<U+FE02>", "<U+FE03>"]

    flood = chips(result.nth(1).locator("pre").first)
    assert len(flood) == 1001
    assert flood[0] == "<U+200B \u00d75000>" and flood[1:3] == ["<U+0000>", "<U+0000>"]
    assert flood[-1] == "<201 more hidden characters shown as \ufffd>"
    assert result.nth(1).locator("pre").first.text_content().endswith("a\ufffd" * 201 + flood[-1])

    # Every hidden character is a chip: in a detector reason, a question text, the final answer.
    reason = result.nth(0).locator(".reason")
    assert reason.text_content().startswith(f"detector: {HIDDEN_SHOWN} [")
    assert _kv(page, "event").text_content() == HIDDEN_SHOWN
    assert chips(_kv(page, "event")) == [f"<{code}>" for code in HIDDEN.values()]
    options = _kv(page, "options").text_content()
    assert f"A. {ARABIC}" in options and "B. report<U+202E>gpj.exe" in options
    final = page.locator("pre.final")
    assert final.locator("mark.boxed").text_content() == r"\boxed{B}"  # offsets after an emoji
    assert len(chips(final)) == len(HIDDEN)
    assert "model<U+202E>eman" in page.text_content("h1")
    assert page.locator("#sample .inert[data-cp='DCFF']").first.get_attribute("title").startswith("0xFF")

    assert raw_hidden_in_dom(page) == []
    assert errors == []
    assert browser_page.network.refused == []


def test_an_invalid_utf8_cell_is_shown_as_marked_bytes(
    browser_page: ConfinedPage, demo_run: Path, tmp_path: Path
) -> None:
    run = tmp_path / demo_run.name
    shutil.copytree(demo_run, run)
    qid = "demo-09"
    for db in sorted((run / "db").glob("*.db")):
        con = sqlite3.connect(db)
        try:
            # Bytes that are not UTF-8 (0xFF, a lone 0xC3) in a question text and a model's answer.
            con.execute("UPDATE questions SET event = CAST(X'4FFF4BC3' AS TEXT) WHERE id = ?", (qid,))
            con.execute(
                "UPDATE run_results SET s0_final_answer_raw = CAST(X'41FF42' AS TEXT) WHERE question_id = ?",
                (qid,),
            )
            con.commit()
        finally:
            con.close()
    out = tmp_path / "bytes.html"
    result = CliRunner().invoke(cli, ["view", str(run), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    assert "\\udcff" in out.read_text(encoding="utf-8")  # the file is UTF-8; the byte travels escaped

    page, errors = _open_sample(browser_page, out, qid)
    assert _kv(page, "event").text_content() == "O<0xFF>K<0xC3>"
    assert page.locator("pre.final").text_content() == "A<0xFF>B"
    assert "not valid UTF-8" in page.locator("pre.final .inert").get_attribute("title")
    assert raw_hidden_in_dom(page) == []
    assert errors == []
