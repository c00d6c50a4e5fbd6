"""``leaderboard.csv``: the demo's rows exactly, and strangers' names kept whole by the CSV quoting."""

from __future__ import annotations

import copy
import csv
import io
from typing import Any

from oracleproto.leaderboard.table_csv import COLUMNS, leaderboard_csv

VIEWER = "oracleproto-view-20260101-000000-de00.html"
#: The demo's board. By hand: 12 questions every model admitted (3 yes/no, 2 binary, 3 MC-single,
#: 4 MC-multi: 23 points); careful earns 18.4 of them (80.0), its interval [15, 20.87] of 23;
#: careful and hasty report cost (the simulator bills), sloppy does not: the front is those two.
DEMO_CSV = (
    ",".join(COLUMNS)
    + "\n"
    + "1,sim/careful::r5::c4,sim/careful::r5::c4,20260101-000000-de00,80.0,65.217391,90.73913,1.0,1,1,"
    "0.805556,0.916667,86.956522,95.652174,38.972567,0.068822,0.001679,595.738349,provider,true,"
    f"88.888889,100.0,100.0,64.444444,,,,,true,,{VIEWER}#/questions/0\n"
    "2,sim/hasty::r5::c4,sim/hasty::r5::c4,20260101-000000-de00,59.006211,43.478261,72.774327,0.0,2,2,"
    "0.583333,0.833333,47.826087,89.130435,38.972567,0.014529,0.00044,2271.325683,provider,true,"
    f"88.888889,50.0,66.666667,49.206349,,,,,true,,{VIEWER}#/questions/1\n"
    "3,sim/sloppy::r5::c4,sim/sloppy::r5::c4,20260101-000000-de00,48.875086,39.889579,57.860594,0.0,2,3,"
    "0.444444,0.75,26.086957,89.855072,38.972567,,,,n/a,false,"
    f"66.666667,83.333333,44.444444,40.899471,,,,,true,,{VIEWER}#/questions/2\n"
)


def test_the_demo_csv(demo_board: Any) -> None:
    written = (demo_board.out / "leaderboard.csv").read_text(encoding="utf-8")
    assert written == leaderboard_csv(demo_board.document) == DEMO_CSV
    assert COLUMNS[:4] == ("rank", "model", "slug", "run_id")


def test_hostile_names_survive_the_quoting(demo_board: Any) -> None:
    doc = copy.deepcopy(demo_board.document)
    names = ['a, "quoted"\nname', "=HYPERLINK(1)", "</script>\u202e\x00"]
    for model, name in zip(doc["models"], names, strict=True):
        model["name"] = name
    doc["models"][0]["could_fall_below"] = [doc["models"][1]["slug"], doc["models"][2]["slug"]]
    rows = list(csv.DictReader(io.StringIO(leaderboard_csv(doc), newline="")))
    assert [r["model"] for r in rows] == names
    assert rows[0]["could_fall_below"] == f"{names[1]}; {names[2]}"
    assert [r["slug"] for r in rows] == [m["slug"] for m in doc["models"]]


def test_a_model_without_an_official_score(demo_board: Any) -> None:
    doc = copy.deepcopy(demo_board.document)
    last = doc["models"][2]
    last.update(
        official=False,
        no_score_reason="demo-01 (sample 1: rate_limit)",
        score=None,
        score_ci_low=None,
        score_ci_high=None,
        point_rank=None,
        p_rank_1=None,
        rank_ci_low=None,
        rank_ci_high=None,
    )
    (row,) = [r for r in csv.DictReader(io.StringIO(leaderboard_csv(doc))) if r["slug"] == last["slug"]]
    assert (row["rank"], row["score"], row["p_rank_1"], row["rank_ci_low"]) == ("", "", "", "")
    assert (row["official_score"], row["no_score_reason"]) == ("false", "demo-01 (sample 1: rate_limit)")


def test_a_lone_surrogate_becomes_a_replacement_character(demo_board: Any) -> None:
    doc = copy.deepcopy(demo_board.document)
    doc["models"][0]["name"] = "a\ud800b"
    doc["models"][1]["no_score_reason"] = "q\udcff (sample 0: missing)"
    text = leaderboard_csv(doc)
    text.encode("utf-8")  # writable as it is
    rows = list(csv.DictReader(io.StringIO(text)))
    assert (rows[0]["model"], rows[1]["no_score_reason"]) == ("a\ufffdb", "q\ufffd (sample 0: missing)")
