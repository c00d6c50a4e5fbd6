"""The board's document: row order, ranks, costs and the Pareto front worked out by hand.

Run A holds ONE (every answer right: 100) and TWO ("A" everywhere: 5 of 13 points, 500/13 =
38.461538), run B holds THREE (as TWO) and FOUR (right, but one sample of q1 failed with a rate
limit: incomplete, so no official score). Every trial has 100 prompt tokens and no completion
cost at these prices: ONE $10,000 per million prompt tokens ($1 a trial, 21 trials, 21 exact:
$1.00 per correct answer), TWO $1,000 ($0.10 a trial, 6 exact of 21: $0.35), THREE $2,000 ($0.70),
FOUR $100. TWO and THREE score alike and TWO is cheaper, so the front is TWO then ONE; FOUR is the
cheapest of all but has no official score, so it is on no front.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from oracleproto.analysis.cost import PriceTable, TokenPrice
from oracleproto.leaderboard import build_leaderboard
from oracleproto.leaderboard.document import SCHEMA
from tests.analysis.builder import ERR
from tests.leaderboard.panel import ALWAYS_A, ONE, RIGHT, RUN_A, RUN_B, THREE, TWO, write_panel_run

FOUR = "vendor-d/four::r5::c4"
PRICES = PriceTable(
    {
        "vendor-a/one": TokenPrice(10_000.0, 0.0),
        "vendor-b/two": TokenPrice(1_000.0, 0.0),
        "vendor-c/three": TokenPrice(2_000.0, 0.0),
        "vendor-d/four": TokenPrice(100.0, 0.0),
    }
)


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("runs")
    a = write_panel_run(root, RUN_A, {ONE: RIGHT, TWO: ALWAYS_A})
    incomplete = {**RIGHT, "q1": [RIGHT["q1"][0], ERR, RIGHT["q1"][2]]}
    b = write_panel_run(root, RUN_B, {THREE: ALWAYS_A, FOUR: incomplete})
    return build_leaderboard([("a", a), ("b", b)], root / "board", prices=PRICES, views=False).document


def test_rows_official_by_rank_then_the_model_without_a_score(document: dict[str, Any]) -> None:
    rows = document["models"]
    assert [m["slug"] for m in rows] == [ONE, TWO, THREE, FOUR]
    assert [m["point_rank"] for m in rows] == [1, 2, 2, None]
    assert [m["official"] for m in rows] == [True, True, True, False]
    assert [m["score"] for m in rows] == [100.0, 38.461538, 38.461538, None]
    four = rows[3]
    assert four["no_score_reason"] is not None and "rate_limit" in four["no_score_reason"]
    assert (four["p_rank_1"], four["rank_ci_low"], four["score_ci_low"]) == (None, None, None)
    # ONE is first in every resample (it is right everywhere); TWO and THREE always tie.
    assert [m["p_rank_1"] for m in rows[:3]] == [1.0, 0.0, 0.0]
    assert [(m["rank_ci_low"], m["rank_ci_high"]) for m in rows[:3]] == [(1, 1), (2, 2), (2, 2)]


def test_costs_and_the_pareto_front(document: dict[str, Any]) -> None:
    rows = {m["slug"]: m for m in document["models"]}
    # FOUR: 20 trials of 100 tokens at $100 per million (the failed one used no token).
    assert [rows[s]["usd_all_repeats"] for s in (ONE, TWO, THREE, FOUR)] == [21.0, 2.1, 4.2, 0.2]
    assert [rows[s]["usd_per_correct"] for s in (ONE, TWO, THREE)] == [1.0, 0.35, 0.7]
    assert [rows[s]["cost_source"] for s in (ONE, TWO, THREE, FOUR)] == ["price table"] * 4
    assert document["pareto_front"] == [TWO, ONE]  # cheapest first
    assert [rows[s]["pareto"] for s in (ONE, TWO, THREE, FOUR)] == [True, True, False, False]


def test_buckets_pairs_and_facts(document: dict[str, Any]) -> None:
    assert document["schema"] == SCHEMA
    assert document["population"] == {
        "questions": 7,
        "by_bucket": {"yes_no": 2, "binary": 1, "mc_single": 2, "mc_multi": 2},
        "sampling_n": 3,
    }
    two = document["models"][1]["by_bucket"]
    # "A": q1 right, q2 wrong (yes/no 1 of 2); q3 wrong; q4 wrong, q5 right; q6 F1 2/3, q7 0.
    assert {b: v["score"] for b, v in two.items()} == {
        "yes_no": 50.0,
        "binary": 0.0,
        "mc_single": 50.0,
        "mc_multi": 33.333333,
    }
    assert {(p["model_a"], p["model_b"]) for p in document["pairs"]} == {
        (ONE, TWO),
        (ONE, THREE),
        (TWO, THREE),
    }
    tie = next(p for p in document["pairs"] if (p["model_a"], p["model_b"]) == (TWO, THREE))
    assert (tie["delta_score_pp"], tie["p_value"], tie["significant_holm"], tie["significant_bh"]) == (
        0.0,
        1.0,
        False,
        False,
    )
    assert [(r["run_id"], r["viewer_written"]) for r in document["runs"]] == [(RUN_A, False), (RUN_B, False)]
    assert document["bootstrap"] == {"iterations": 2000, "seed": 20261001, "resampled": True}


def test_the_document_is_plain_json(document: dict[str, Any]) -> None:
    text = json.dumps(document, allow_nan=False, sort_keys=True)
    assert json.loads(text) == document


def test_the_demo_scores_by_hand(demo_board: Any) -> None:
    """The demo: 12 questions every model admitted, 23 points (3 yes/no, 2 binary, 3×2, 4×3)."""
    rows = {m["slug"]: m for m in demo_board.document["models"]}
    careful, hasty, sloppy = (rows[f"sim/{p}::r5::c4"] for p in ("careful", "hasty", "sloppy"))
    assert (careful["score"], careful["score_ci_low"], careful["score_ci_high"]) == (
        80.0,
        65.217391,
        90.73913,
    )
    assert round(careful["score_ci_low"] * 23 / 100, 6) == 15  # the lower bound is 15 of 23 points
    assert (round(hasty["score"], 2), round(sloppy["score"], 2)) == (59.01, 48.88)
    # Careful scores best, hasty costs least per correct answer, sloppy has no cost: the front is
    # hasty then careful.
    assert hasty["usd_per_correct"] < careful["usd_per_correct"] and sloppy["usd_per_correct"] is None
    assert demo_board.document["pareto_front"] == [hasty["slug"], careful["slug"]]
