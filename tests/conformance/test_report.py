"""The report: per-channel figures, the lists, the text table and the JSON form."""

from __future__ import annotations

import json

from oracleproto.conformance.positions import Located, SearchPosition
from oracleproto.conformance.report import build_report
from oracleproto.conformance.responder import Pairing
from oracleproto.conformance.samples import Classified
from tests.conformance.helpers import dumps, search


def _located(query: str) -> Located:
    return Located("search", SearchPosition(query, "2026-03-01"))


def test_figures_lists_and_both_forms() -> None:
    captured = [Classified(search(i, f"q{i}"), _located(f"q{i}")) for i in range(1, 16)]
    captured.append(Classified(search(16, "x"), Located("search", None, "the body has no string 'query'")))
    pairings = [Pairing(0, _located("q1"), captured[0].exchange.body, captured[0], identical=True)]
    for i in range(1, 13):  # 12 differences: more than the text shows
        ours = dumps({"api_key": "k", "query": f"q{i + 1}", "end_date": "2026-03-01", "extra": 1})
        pairings.append(Pairing(i, _located(f"q{i + 1}"), ours, captured[i]))
    pairings.append(Pairing(13, _located("lost\u202e"), b"{}", None))
    report = build_report("cap\x1b.jsonl", pairings, captured)
    search_report = report.channels[1]
    assert (search_report.ours, search_report.captured, search_report.paired, search_report.identical) == (
        14,
        16,
        13,
        1,
    )
    assert len(search_report.differences) == 12 and len(search_report.captured_unused) == 3
    assert not report.ok and report.channels[0].ok and report.channels[2].ok

    text = report.render_text(limit=10)
    assert all(line.isprintable() for line in text.splitlines())
    lines = text.splitlines()
    assert lines[0] == "conformance against cap<U+001B>.jsonl: DIFFERS"
    assert lines[2].split() == [
        "channel",
        "ours",
        "captured",
        "paired",
        "identical",
        "different",
        "unmatched",
        "unused",
    ]
    assert lines[4].split() == ["search", "14", "16", "13", "1", "12", "1", "3"]
    assert "search: differences (12)" in lines and "  … 2 more" in lines
    assert '  search query "lost<U+202E>" end_date 2026-03-01' in lines
    assert "  seq 16: search (no position: the body has no string 'query')" in lines
    difference = next(line for line in lines if "(captured seq 2)" in line)
    assert difference == (
        '  search query "q2" end_date 2026-03-01 (captured seq 2): (body): '
        "keys [api_key, query, end_date, extra] vs [api_key, query, end_date]"
    )

    data = json.loads(json.dumps(report.as_dict()))
    assert data["ok"] is False and data["capture"] == "cap\x1b.jsonl"
    assert data["channels"]["search"]["paired"] == 13
    assert len(data["channels"]["search"]["differences"]) == 12
    assert data["channels"]["search"]["captured_unused"][-1] == {
        "position": "search (no position: the body has no string 'query')",
        "seq": 16,
    }
    assert data["channels"]["llm"] == {
        "ours": 0,
        "captured": 0,
        "paired": 0,
        "identical": 0,
        "differences": [],
        "ours_unmatched": [],
        "captured_unused": [],
    }


def test_an_empty_comparison_conforms() -> None:
    report = build_report("cap.jsonl", [], [])
    assert report.ok
    assert report.render_text().splitlines()[0] == "conformance against cap.jsonl: conforms"
