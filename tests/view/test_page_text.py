"""The page file is total over Unicode: any text of a run gives a UTF-8 page whose script gets it back."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from oracleproto.analysis.reader import read_run
from oracleproto.errors import AnalysisError
from oracleproto.primitives.loopback_http import inline_hashes
from oracleproto.view import render_page, write_page
from oracleproto.view.document import document_json, json_text
from oracleproto.view.inert import MARK, visible_text, with_inert
from oracleproto.view.rows import cell_text
from oracleproto.view.samples import boxed_span, utf16_span
from tests.view.test_page import embedded


def test_json_text_escapes_what_utf8_or_a_script_cannot_carry() -> None:
    value = {
        "lone": "a\ud800b\udcff",
        "lines": "x\u2028y\u2029z",
        "rtl": "\u202e",
        "nan": math.nan,
        "inf": -math.inf,
    }
    text = json_text(value)
    assert text.encode("utf-8")  # no lone surrogate left raw
    assert "\\ud800" in text and "\\udcff" in text and "\\u2028" in text and "\\u2029" in text
    assert "\u202e" in text  # other characters stay as they are (the page marks them)
    back = json.loads(text)
    assert back["lone"] == value["lone"] and back["lines"] == value["lines"]
    assert back["nan"] == "NaN" and back["inf"] == "-Infinity"  # not JSON numbers: shown as text
    assert json.loads(json_text({"n": 1.5})) == {"n": 1.5}


def test_the_embedded_document_survives_any_character(demo_document: dict[str, Any], tmp_path: Path) -> None:
    doc = dict(demo_document)
    doc["source"] = "bundle-\udcff\u202e.tar.gz"  # a file name that was not UTF-8, with an override
    doc["facts"] = {**demo_document["facts"], "run_id": None}
    page = render_page(doc)
    out = write_page(page, tmp_path / "v.html")
    written = out.read_text(encoding="utf-8")
    assert embedded(written)["source"] == doc["source"]
    title = re.search(r"<title>(.*)</title>", written).group(1)  # type: ignore[union-attr]
    assert title == "oracleproto view · bundle-&lt;U+DCFF&gt;&lt;U+202E&gt;.tar.gz"
    assert not set("<>&") & set(document_json(doc))


def test_the_page_policy_allows_its_own_script_and_style_only(demo_page: Path) -> None:
    page = demo_page.read_text(encoding="utf-8")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)  # type: ignore[union-attr]
    (script,) = inline_hashes(page, "script")  # the data block is not a script: no hash, no need
    (style,) = inline_hashes(page, "style")
    assert f"script-src {script};" in policy and f"style-src {style};" in policy
    assert "unsafe" not in policy and "http" not in policy
    assert "img-src data:" in policy and "default-src 'none'" in policy
    assert MARK not in page and "function inertFill" in page


def test_with_inert_needs_exactly_one_mark() -> None:
    with pytest.raises(ValueError, match="exactly once"):
        with_inert("<script></script>")
    with pytest.raises(ValueError, match="exactly once"):
        with_inert(MARK + MARK)


def test_visible_text_spells_out_hidden_characters() -> None:
    assert visible_text("plain text, 日本語, עברית") == "plain text, 日本語, עברית"
    assert visible_text("a\u202eb\x00c\ud800\n\t") == "a<U+202E>b<U+0000>c<U+D800>\n\t"
    assert visible_text("a<U+202E>b\u202e").encode("utf-8")


def test_boxed_offsets_count_utf16_units() -> None:
    text = "\U0001f600\U0001f600 " + r"\boxed{C}"
    start, end = utf16_span(text, boxed_span(text)) or (0, 0)
    assert text.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le") == r"\boxed{C}"
    assert (start, end) == (5, 14)
    assert utf16_span("x", None) is None


@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o027, 0o640)])
def test_the_page_file_gets_the_user_s_umask(tmp_path: Path, mask: int, expected: int) -> None:
    old = os.umask(mask)
    try:
        out = write_page("<!DOCTYPE html>", tmp_path / "v.html")
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == expected
    assert [p.name for p in tmp_path.iterdir()] == ["v.html"]


def test_the_viewer_reads_a_cell_that_is_not_utf8_and_the_analysis_still_refuses_it(
    demo_run: Path, tmp_path: Path
) -> None:
    run = tmp_path / demo_run.name
    shutil.copytree(demo_run, run)
    db = sorted((run / "db").glob("*.db"))[0]
    con = sqlite3.connect(db)
    con.execute("UPDATE questions SET event = CAST(X'41FF' AS TEXT) WHERE id = 'demo-01'")
    con.commit()
    con.close()
    with pytest.raises(AnalysisError, match=r"UTF-8.*event|event.*UTF-8"):
        read_run(run)  # the default stays strict: `report` must not publish damaged text
    data = read_run(run, decode_text=cell_text)  # the viewer's reading: the run whole
    assert "demo-01" in data.models[0].table.question_ids
    assert cell_text(b"A\xffB\xc3") == "A\udcffB\udcc3"
