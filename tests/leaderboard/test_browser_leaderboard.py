"""The leaderboard page in headless Chromium: sorting, the Holm/BH toggle, row links, hostile names.

Every request the page makes is logged and every non-local one refused (``tests/browser.py``);
each test ends by asserting none was made. Waits are on conditions (a selector, a URL), never on
time; a sort or a toggle re-renders synchronously inside its click handler, so what the click
returns to is what the reader sees.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from oracleproto.analysis.leakage import read_audit
from oracleproto.leaderboard import BoardOutput, build_leaderboard
from oracleproto.leaderboard.page import render_board_page
from oracleproto.view.page import write_page
from tests.bidi_layout import (
    HIDDEN,
    HIDDEN_SHOWN,
    HIDDEN_TEXT,
    PLAIN_TITLE,
    SPOOFED_TITLE,
    chips,
    raw_hidden_in_dom,
    visual_order,
)
from tests.browser import ConfinedPage
from tests.leaderboard.panel import RUN_B, THREE, two_runs
from tests.leaderboard.test_audit import scored
from tests.view.test_page import HOSTILE

CAREFUL, HASTY, SLOPPY = (f"sim/{m}::r5::c4" for m in ("careful", "hasty", "sloppy"))
#: What each sortable column sorts by (the page's ``get``), read from the document's row.
SORTED_BY = {
    "point_rank": lambda m: m["point_rank"],
    "name": lambda m: m["name"],
    "score": lambda m: m["score"],
    "interval": lambda m: m["score_ci_low"],
    "p_rank_1": lambda m: m["p_rank_1"],
    "rank_ci": lambda m: m["rank_ci_low"],
    "exact_at_1": lambda m: m["exact_at_1"],
    "pass_at_3": lambda m: m["pass_at_3"],
    "vote_score": lambda m: m["vote_score"],
    "random_score": lambda m: m["random_score"],
    "usd_per_correct": lambda m: m["usd_per_correct"],
    "usd_all_repeats": lambda m: m["usd_all_repeats"],
    "complete_questions": lambda m: m["complete_questions"],
    # Only with --audit: the leak-widened interval, by its lower end.
    "leak": lambda m: m["leak"] and m["leak"]["ci_low"],
}


def _open(browser_page: ConfinedPage, path: Path, fragment: str = "") -> tuple[Any, list[str]]:
    page: Any = browser_page.page
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(path.as_uri() + fragment)
    page.wait_for_selector("#board tbody tr")
    return page, errors


def _order(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("#board tbody tr", "rows => rows.map(r => r.dataset.slug)"))


def _sort(page: Any, key: str) -> tuple[list[str], str]:
    """Click a column's header: the rows' order and the header's aria-sort after it."""
    header = page.locator(f'#board th[data-key="{key}"]')
    header.click()
    return _order(page), header.get_attribute("aria-sort")


def expected_order(models: list[dict[str, Any]], key: str, direction: str) -> list[str]:
    """Values in the direction, ties in board order, missing values last whichever the direction."""
    get = SORTED_BY[key]
    present = [(get(m), i, m["slug"]) for i, m in enumerate(models) if get(m) is not None]
    present.sort(key=lambda t: t[1])  # board order among ties (a stable sort keeps it)
    present.sort(key=lambda t: t[0], reverse=direction == "descending")
    return [slug for _, _, slug in present] + [m["slug"] for m in models if get(m) is None]


def _no_outside_request(browser_page: ConfinedPage, errors: list[str]) -> None:
    assert errors == []
    assert browser_page.network.refused == []
    assert browser_page.network.requests
    assert all(url.startswith("file:") for url in browser_page.network.requests), (
        browser_page.network.requests
    )


def _page_of(document: dict[str, Any], path: Path) -> Path:
    return write_page(render_board_page(document), path)


def test_sorting_by_score_and_by_cost_per_correct_answer(
    browser_page: ConfinedPage, demo_board: BoardOutput
) -> None:
    page, errors = _open(browser_page, demo_board.out / "leaderboard.html")
    assert _order(page) == [CAREFUL, HASTY, SLOPPY]  # by point rank
    assert page.locator('#board th[data-key="point_rank"]').get_attribute("aria-sort") == "ascending"
    assert _sort(page, "score") == ([CAREFUL, HASTY, SLOPPY], "descending")  # best first
    assert _sort(page, "score") == ([SLOPPY, HASTY, CAREFUL], "ascending")
    # Cost per correct answer: cheapest first; sloppy has none and stays last both ways.
    assert _sort(page, "usd_per_correct") == ([HASTY, CAREFUL, SLOPPY], "ascending")
    assert _sort(page, "usd_per_correct") == ([CAREFUL, HASTY, SLOPPY], "descending")
    cells = page.locator('#board td[data-key="usd_per_correct"]').all_text_contents()
    assert cells == ["0.00168", "0.000440", "—"]
    # Only the sorted column's header says so.
    assert page.locator("#board th[aria-sort]").count() == 1
    # The keyboard sorts too (Enter on a focused header).
    name = page.locator('#board th[data-key="name"]')
    name.focus()
    page.keyboard.press("Enter")
    assert (_order(page), name.get_attribute("aria-sort")) == ([CAREFUL, HASTY, SLOPPY], "ascending")
    page.keyboard.press("Enter")
    assert (_order(page), name.get_attribute("aria-sort")) == ([SLOPPY, HASTY, CAREFUL], "descending")
    _no_outside_request(browser_page, errors)


def test_every_column_sorts_both_ways_with_missing_values_last(
    browser_page: ConfinedPage, demo_board: BoardOutput, tmp_path: Path
) -> None:
    # The demo with more gaps: hasty has no P(rank 1) and no rank interval, careful no Vote.
    doc = copy.deepcopy(demo_board.document)
    doc["models"][1].update(p_rank_1=None, rank_ci_low=None, rank_ci_high=None)
    doc["models"][0]["vote_score"] = None
    page, errors = _open(browser_page, _page_of(doc, tmp_path / "board.html"))
    keys = page.eval_on_selector_all("#board th.sortable", "hs => hs.map(h => h.dataset.key)")
    assert sorted(keys) == sorted(k for k in SORTED_BY if k != "leak")
    for key in keys:
        for _ in range(2):  # once in the column's first direction, once reversed
            order, direction = _sort(page, key)
            assert direction in ("ascending", "descending")
            assert order == expected_order(doc["models"], key, direction), (key, direction)
    _no_outside_request(browser_page, errors)


def test_with_an_audit_the_widened_interval_is_shown_and_sorts(
    browser_page: ConfinedPage, demo_run: Path, tmp_path: Path
) -> None:
    audit = read_audit(scored(tmp_path / "audit"))
    board = build_leaderboard([("demo", demo_run)], tmp_path / "board", audits=[audit], views=False)
    page, errors = _open(browser_page, board.out / "leaderboard.html")
    assert page.text_content('#board th[data-key="leak"]') == "Leak-adjusted 95% CI"
    careful = board.document["models"][0]
    shown = page.text_content(f'#board tr[data-slug="{CAREFUL}"] td[data-key="leak"]')
    assert shown == f"[{careful['leak']['ci_low']:.2f}, {careful['score_ci_high']:.2f}]"
    # The bar draws the widening (orange) below the interval.
    assert page.locator(f'#board tr[data-slug="{CAREFUL}"] svg rect.leak').count() == 1
    for _ in range(2):
        order, direction = _sort(page, "leak")
        assert order == expected_order(board.document["models"], "leak", direction)
    assert "FN/N = 0/100" in page.text_content("#notes")
    _no_outside_request(browser_page, errors)


def test_the_holm_bh_toggle_changes_the_marks(
    browser_page: ConfinedPage, demo_board: BoardOutput, tmp_path: Path
) -> None:
    # The demo's careful–hasty pair made significant under BH only (its p-values kept), so the
    # two adjustments mark the matrix differently.
    doc = copy.deepcopy(demo_board.document)
    pair = next(p for p in doc["pairs"] if (p["model_a"], p["model_b"]) == (CAREFUL, HASTY))
    pair["significant_holm"] = False
    doc["multiple_comparisons"]["significant_holm"] = 1
    page, errors = _open(browser_page, _page_of(doc, tmp_path / "board.html"))

    def marks() -> dict[tuple[str, str], str]:
        cells = page.eval_on_selector_all(
            "#pairs td.cell[data-a]", "tds => tds.map(td => [td.dataset.a, td.dataset.b, td.className])"
        )
        return {(a, b): cls.removeprefix("cell ") for a, b, cls in cells}

    bh = {
        (CAREFUL, HASTY): "better",
        (CAREFUL, SLOPPY): "better",
        (HASTY, CAREFUL): "worse",
        (HASTY, SLOPPY): "ns",
        (SLOPPY, CAREFUL): "worse",
        (SLOPPY, HASTY): "ns",
    }
    assert page.locator("#adjust-bh").is_checked()
    assert marks() == bh
    assert page.text_content("#sig-line").startswith("2 of 3 pairs significant under Benjamini–Hochberg")
    page.locator("#adjust-holm").check()
    assert marks() == {**bh, (CAREFUL, HASTY): "ns", (HASTY, CAREFUL): "ns"}
    assert page.text_content("#sig-line").startswith("1 of 3 pairs significant under Holm")
    page.locator("label[for=adjust-bh]").click()
    assert marks() == bh
    # Each cell is the row's score minus the column's, in points.
    assert page.text_content(f'#pairs td[data-a="{CAREFUL}"][data-b="{HASTY}"]') == "+21.0"
    assert page.text_content(f'#pairs td[data-a="{HASTY}"][data-b="{CAREFUL}"]') == "-21.0"
    _no_outside_request(browser_page, errors)


@pytest.mark.parametrize("index", [0, 1, 2])
def test_a_row_link_opens_that_models_samples_in_the_viewer(
    browser_page: ConfinedPage, demo_board: BoardOutput, index: int
) -> None:
    model = demo_board.document["models"][index]
    page, errors = _open(browser_page, demo_board.out / "leaderboard.html")
    page.locator(f'#board tr[data-slug="{model["slug"]}"] a.model').click()
    viewer = demo_board.document["runs"][0]["viewer"]
    page.wait_for_url(f"**/{viewer}#/questions/{index}")
    page.wait_for_selector("#questions tbody tr")
    assert page.text_content("h1") == f"Questions · {model['name']}"
    assert page.locator("select").first.input_value() == str(index)
    badges = page.locator("#questions a.badge")
    assert badges.count() > 0
    assert badges.first.get_attribute("href").startswith(f"#/sample/{index}/")
    badges.first.click()
    page.wait_for_selector("#sample")
    assert page.text_content("h1").endswith(f" · {model['name']}")
    _no_outside_request(browser_page, errors)


def test_on_a_panel_a_row_links_to_its_own_runs_viewer(browser_page: ConfinedPage, tmp_path: Path) -> None:
    board = build_leaderboard([(p.name, p) for p in two_runs(tmp_path / "runs")], tmp_path / "board")
    page, errors = _open(browser_page, board.out / "leaderboard.html")
    assert page.locator("#board span.run").all_text_contents()[-1] == RUN_B  # a panel names each row's run
    page.locator(f'#board tr[data-slug="{THREE}"] a.model').click()
    page.wait_for_url(f"**/oracleproto-view-{RUN_B}.html#/questions/0")
    page.wait_for_selector("#questions tbody tr")
    assert page.text_content("h1") == f"Questions · {THREE}"
    _no_outside_request(browser_page, errors)


def hostile_document(document: dict[str, Any]) -> dict[str, Any]:
    """The demo's board with strangers' text in the names, the run, a reason and a note.

    Hasty's slug becomes ``__proto__`` everywhere (a key no object map may take for its prototype).
    """
    doc: dict[str, Any] = json.loads(json.dumps(document).replace(json.dumps(HASTY), '"__proto__"'))
    careful, hasty, sloppy = doc["models"]
    careful["name"] = HOSTILE
    hasty["name"] = SPOOFED_TITLE
    sloppy["name"] = HIDDEN_TEXT
    sloppy.update(official=False, no_score_reason=f"{SPOOFED_TITLE} {HOSTILE}")
    doc["runs"][0].update(run_id=f"run{SPOOFED_TITLE}", source=HOSTILE)
    doc["notes"].append(HIDDEN_TEXT)
    return doc


def test_hostile_names_are_shown_inert(
    browser_page: ConfinedPage, demo_board: BoardOutput, tmp_path: Path
) -> None:
    doc = hostile_document(demo_board.document)
    page, errors = _open(browser_page, _page_of(doc, tmp_path / "hostile.html"))
    assert page.evaluate("window.__pwned") is None
    assert page.locator("script").count() == 2 and page.locator("img").count() == 0
    links = page.locator("#board a.model")
    assert links.nth(0).text_content() == HOSTILE  # shown as the text it is
    spoofed = links.nth(1)
    assert spoofed.text_content() == "report<U+202E>gpj.exe"
    assert visual_order(spoofed) == PLAIN_TITLE  # the override reorders nothing
    assert "RIGHT-TO-LEFT OVERRIDE" in spoofed.locator(".inert").get_attribute("title")
    hidden = links.nth(2)
    assert hidden.text_content() == HIDDEN_SHOWN
    assert chips(hidden) == [f"<{code}>" for code in HIDDEN.values()]
    # Tooltips cannot hold chips: hidden characters are spelled out there.
    assert page.get_attribute("#board .badge.noscore", "title") == f"report<U+202E>gpj.exe {HOSTILE}"
    assert page.title() == "oracleproto leaderboard · runreport<U+202E>gpj.exe"
    assert page.locator("#notes li").last.text_content() == HIDDEN_SHOWN
    # The slug "__proto__" is a row like any other: in the board, and in the pairwise matrix.
    assert _order(page) == [CAREFUL, "__proto__", SLOPPY]
    assert page.text_content(f'#pairs td[data-a="{CAREFUL}"][data-b="__proto__"]') == "+21.0"
    assert page.locator("#pairs tbody tr").count() == 2  # sloppy has no official score now
    assert raw_hidden_in_dom(page) == []
    _no_outside_request(browser_page, errors)


def test_the_page_cannot_reach_outside(browser_page: ConfinedPage, demo_board: BoardOutput) -> None:
    page, errors = _open(browser_page, demo_board.out / "leaderboard.html")
    policy = page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    assert policy.startswith("default-src 'none'; script-src 'sha256-")
    assert "connect-src 'none'; img-src 'none'" in policy and "unsafe-inline" not in policy
    # The policy stops a request before it is made: the browser never asks for it.
    outcome = page.evaluate("() => fetch('https://example.com/x').then(() => 'fetched', () => 'refused')")
    assert outcome == "refused"
    assert not any("example.com" in url for url in browser_page.network.requests)
    # Every link on the page stays in the folder: a fragment or a sibling file.
    hrefs = page.eval_on_selector_all("a[href]", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs and all(h.startswith("oracleproto-view-") for h in hrefs), hrefs
    _no_outside_request(browser_page, errors)
