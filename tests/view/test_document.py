"""What the viewer's document holds, checked against the DBs and cassettes it was read from."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from oracleproto.analysis.reader import read_run
from oracleproto.store import ModelStore
from oracleproto.view import build_document
from oracleproto.view.samples import boxed_span
from tests.earlier_layout import write_earlier_run


def _db(run: Path, document: dict[str, Any], slug: str) -> Path:
    file = next(m["file"] for m in document["models"] if m["slug"] == slug)
    return run / "db" / file


def _search_calls(db: Path) -> dict[tuple[str, int], list[dict[str, Any]]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute("SELECT * FROM run_results").fetchall()
        names = [d[0] for d in con.execute("SELECT * FROM run_results LIMIT 1").description]
    finally:
        con.close()
    out: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in rows:
        cells = dict(zip(names, row, strict=True))
        j = 0
        while f"s{j}_search_calls" in cells:
            out[(cells["question_id"], j)] = json.loads(cells[f"s{j}_search_calls"] or "[]")
            j += 1
    return out


def test_every_verdict_shown_is_the_db_label_and_the_recorded_reply_agrees(
    demo_run: Path, demo_document: dict[str, Any]
) -> None:
    checked = 0
    for model in demo_document["models"]:
        slug = model["slug"]
        stored = _search_calls(_db(demo_run, demo_document, slug))
        for qid, samples in demo_document["details"][slug].items():
            for j, detail in enumerate(samples):
                assert detail["search_calls"] == stored[(qid, j)]
                for call, rec in zip(detail["search_calls"], detail["recorded_searches"], strict=True):
                    search = demo_document["searches"][rec["search_key"]]
                    assert (search["query"], search["end_date"]) == (call["query"], call["end_date"])
                    assert len(search["results"]) == call["n_results_raw"] == len(rec["detector_keys"])
                    for label, key in zip(call["detector_verdicts"], rec["detector_keys"], strict=True):
                        assert key is not None
                        assert demo_document["verdicts"][key]["verdict"] == label
                        assert demo_document["verdicts"][key]["reason"]
                        checked += 1
    assert checked > 500


def test_outcomes_and_exam_scores_follow_the_analysis_reader(
    demo_run: Path, demo_document: dict[str, Any]
) -> None:
    data = read_run(demo_run)
    for model in data.models:
        table = model.table
        for qi, qid in enumerate(table.question_ids):
            for j, shown in enumerate(demo_document["summaries"][model.slug][qid]):
                if table.parsed[qi, j]:
                    assert shown["outcome"] == ("correct" if table.correct[qi, j] else "wrong")
                if table.counted[qi, j]:
                    assert shown["exam"] == round(float(table.exam[qi, j]), 6)


def test_entry_keys_and_llm_calls_are_the_sample_s_record(
    demo_run: Path, demo_document: dict[str, Any]
) -> None:
    slug = demo_document["models"][0]["slug"]
    with ModelStore.open_existing(_db(demo_run, demo_document, slug)) as store:
        keys = store.sample_entry_keys()
    assert keys is not None
    for (qid, j), expected in keys.items():
        detail = demo_document["details"][slug][qid][j]
        assert detail["entry_keys"] == expected
        steps = [c["step"] for c in detail["llm_calls"]]
        assert steps == list(range(len(steps)))
        assert len(steps) == len(detail["step_metrics"])


def test_tables_3_to_5_are_the_published_values(demo_run: Path, demo_document: dict[str, Any]) -> None:
    names = [t["name"] for t in demo_document["tables"]]
    assert names == ["table3_overall", "table4_buckets", "table5_consistency"]
    published = (demo_run / "analysis" / "table3_overall.csv").read_text(encoding="utf-8").splitlines()[1:]
    composite = {line.split(",")[0]: line.split(",")[1] for line in published}
    for row in demo_document["tables"][0]["rows"]:
        assert row["cells"][0]["text"] == composite[row["name"]]
    table4 = demo_document["tables"][1]
    assert [c["bucket"] for c in table4["rows"][0]["cells"]] == ["yes_no", "binary", "mc_single", "mc_multi"]
    assert {p["name"] for p in demo_document["plots"]} == {"cost_vs_composite", "buckets", "pass_at_1"}
    assert all(p["uri"].startswith("data:image/png;base64,") for p in demo_document["plots"])


def test_the_prompt_is_shown_once_and_harness_injections_are_marked(demo_document: dict[str, Any]) -> None:
    slug = demo_document["models"][0]["slug"]
    for qid, samples in demo_document["details"][slug].items():
        prompt = demo_document["prompts"][slug][qid]
        for detail in samples:
            assert all(m.get("content") != prompt for m in detail["messages"])
    marked = [
        m
        for samples in demo_document["details"][slug].values()
        for d in samples
        for m in d["messages"]
        if m.get("harness")
    ]
    assert marked and all("[Harness status]" in str(m["content"]) or m["role"] == "user" for m in marked)


def test_boxed_span_is_the_last_balanced_box() -> None:
    text = r"maybe \boxed{A} no: \boxed{\text{B, C}} and \boxed{unclosed"
    start, end = boxed_span(text) or (0, 0)
    assert text[start:end] == r"\boxed{\text{B, C}}"
    assert boxed_span("no box") is None


def test_a_run_of_the_earlier_implementation_shows_what_its_dbs_hold(tmp_path: Path) -> None:
    run = write_earlier_run(tmp_path / "runs")
    document = build_document(run)
    assert document["layout"] == "earlier implementation"
    assert document["recording"] == {"present": False, "error": None}
    assert document["searches"] == {} and document["verdicts"] == {}
    assert document["facts"]["convention"] == "reference-v4"
    assert len(document["tables"]) == 3
    slug = document["models"][0]["slug"]
    outcomes = {s["outcome"] for samples in document["summaries"][slug].values() for s in samples}
    assert {"error", "unparsed"} <= outcomes
    detail = next(iter(document["details"][slug].values()))[0]
    assert detail["entry_keys"] is None and "recorded_searches" not in detail


def test_a_damaged_recording_still_shows_the_dbs_and_says_why(demo_run: Path, tmp_path: Path) -> None:
    run = tmp_path / demo_run.name
    shutil.copytree(demo_run, run)
    search = run / "cassettes" / "search.yaml"
    search.write_text(
        search.read_text(encoding="utf-8").replace("Fictional", "Factional", 1), encoding="utf-8"
    )
    document = build_document(run)
    assert document["recording"]["present"] is False
    assert "search.yaml" in document["recording"]["error"]
    slug = document["models"][0]["slug"]
    detail = next(iter(document["details"][slug].values()))[0]
    assert detail["search_calls"] and "recorded_searches" not in detail
