"""Pairwise tests and ranks of any convention's headline metric, from the paper bootstrap's replicates,
and the report that carries them (analysis revision 5)."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from builder import QUESTIONS, Q, RunSpec, T, ok, write_run

from oracleproto.analysis.bootstrap import RatioColumns, Replicates
from oracleproto.analysis.comparisons import exact_replicates, headline_comparisons
from oracleproto.analysis.report import analyze_run
from oracleproto.analysis.writer import summary_json, write_analysis

#: Three resamples of two questions: both draws of q1, one of each, both of q2.
COUNTS = np.asarray([[2, 0], [1, 1], [0, 2]], dtype=np.int64)


def _replicates(a: list[int], den: list[int]) -> Replicates:
    """A pass@1-like statistic: Σ a / Σ den over the drawn questions (one column, weight 1)."""
    column = np.asarray(a, dtype=np.int64)[:, None]
    stat = RatioColumns(
        column, np.ones_like(column), np.asarray(den, dtype=np.int64)[:, None], (Fraction(1),)
    )
    return Replicates.draw(stat, COUNTS)


def test_exact_replicates_with_an_undefined_one() -> None:
    # x right on q1 only: 2/2, 1/2, 0/2. z has q2 undefined (den 0): 1/1 … 1/1, and 0/0 in r2.
    assert exact_replicates(_replicates([1, 0], [1, 1])) == [1, Fraction(1, 2), 0]
    assert exact_replicates(_replicates([1, 0], [1, 0])) == [1, 1, None]


def test_headline_comparisons_by_hand() -> None:
    """x: 1, 1/2, 0; y: 0, 0, 0. Δ = 1, 1/2, 0: one replicate ≤ 0 and three ≥ 0, so
    p = 2·(1 + 1)/(3 + 1) = 1. Ranks: x first in all three (tied with y in r2), y first once."""
    block = headline_comparisons(
        ["x", "y", "w"],
        {"x": 0.5, "y": 0.0, "w": None},
        {
            "x": exact_replicates(_replicates([1, 0], [1, 1])),
            "y": exact_replicates(_replicates([0, 0], [1, 1])),
        },
        metric="pass_at_1_avg",
    )
    assert block["models"] == ["x", "y"]  # w has no point value
    (pair,) = block["pairs"]
    assert (pair["a"], pair["b"], pair["replicates"], pair["p_value"]) == ("x", "y", 3, 1.0)
    assert pair["significant_bh"] is False
    ranks = block["ranks"]["models"]
    assert ranks["x"]["p_rank_1"] == 1.0
    assert ranks["y"]["p_rank_1"] == 1 / 3
    assert ranks["y"]["rank_ci"] == [1, 2]


def _gold(q: Q) -> str:
    return ",".join(x.strip() for x in q.answer.split(","))


def _wrong(q: Q) -> str:
    """A letter set that is never the gold one (scores 0: a false positive)."""
    return "B" if _gold(q) == "A" else "A"


def _always(letters: Callable[[Q], str]) -> dict[str, list[T]]:
    return {q.id: [ok(letters(q))] for q in QUESTIONS}


def test_the_report_carries_pairwise_tests_and_ranks_of_composite_accuracy(tmp_path: Path) -> None:
    """x answers every question right, y and z every one wrong (identically), so in each of the
    B = 99 resamples x = 1 and y = z = 0: Δ(x, y) > 0 in all 99, p = 2·(1 + 0)/(99 + 1) = 0.02, the
    same for (x, z); Δ(y, z) = 0 in all, p = min(1, 2·(1 + 99)/100) = 1.
    Holm (m = 3): 3·0.02 = 0.06, max(0.06, 2·0.02) = 0.06, max(0.06, 1·1) = 1 → nothing significant.
    BH: 1; 3·0.02/2 = 0.03; min(0.03, 3·0.02/1) = 0.03 → both x pairs significant at 0.05.
    Ranks: x first in every resample; y and z tie for second; τ-b = (2 − 0)/√(2·2) = 1 each time."""
    spec = RunSpec(
        n=1,
        models={
            "v/x::r5::c4": _always(_gold),
            "v/y::r5::c4": _always(_wrong),
            "v/z::r5::c4": _always(_wrong),
        },
    )
    for convention in ("paper", "reference-v4"):
        result = analyze_run(write_run(tmp_path / convention, spec), convention, bootstrap_samples=99, seed=3)
        block = result.comparisons
        assert block is not None and block["metric"] == "composite_accuracy"
        shown = [(p["a"][2], p["b"][2], p["p_value"], p["p_holm"], p["p_bh"]) for p in block["pairs"]]
        assert shown == [
            ("x", "y", 0.02, pytest.approx(0.06), pytest.approx(0.03)),
            ("x", "z", 0.02, pytest.approx(0.06), pytest.approx(0.03)),
            ("y", "z", 1.0, 1.0, 1.0),
        ]
        assert [p["significant_holm"] for p in block["pairs"]] == [False, False, False]
        assert [p["significant_bh"] for p in block["pairs"]] == [True, True, False]
        assert block["multiple_comparisons"]["line"] == (
            "0 of 3 pairs significant under Holm, 2 under Benjamini–Hochberg (both at 0.05)"
        )
        ranks = block["ranks"]["models"]
        assert [ranks[f"v/{m}::r5::c4"]["p_rank_1"] for m in "xyz"] == [1.0, 0.0, 0.0]
        assert [ranks[f"v/{m}::r5::c4"]["rank_ci"] for m in "xyz"] == [[1, 1], [2, 2], [2, 2]]
        assert block["ranks"]["kendall_tau_b"] == {"mean": 1.0, "ci": [1.0, 1.0], "replicates": 99}
        assert json.loads(summary_json(result))["comparisons"]["pairs"][0]["p_bh"] == 0.03


def test_revision_4_keeps_its_files_and_keys(tmp_path: Path) -> None:
    """A run published at revision 4 is re-scored without comparisons: no key, no table_pairs."""
    spec = RunSpec(n=1, models={"v/x::r5::c4": _always(_gold), "v/y::r5::c4": _always(_wrong)})
    run = write_run(tmp_path, spec)
    older = analyze_run(run, "paper", bootstrap_samples=20, revision=4)
    current = analyze_run(run, "paper", bootstrap_samples=20)
    assert older.comparisons is None and "comparisons" not in older.summary()
    assert current.comparisons is not None and "comparisons" in current.summary()
    old_files = {p.name for p in write_analysis(older, tmp_path / "old", "md")}
    new_files = {p.name for p in write_analysis(current, tmp_path / "new", "md")}
    assert new_files - old_files == {"table_pairs.md"}
    # Everything else the older revision wrote is what the current one writes (same numbers).
    assert older.paired_differences == current.paired_differences


def test_without_a_bootstrap_the_block_names_the_models_and_tests_nothing(tmp_path: Path) -> None:
    spec = RunSpec(n=1, models={"v/x::r5::c4": _always(_gold), "v/y::r5::c4": _always(_wrong)})
    block = analyze_run(write_run(tmp_path, spec), "paper", bootstrap_samples=0).comparisons
    assert block is not None
    assert block["models"] == ["v/x::r5::c4", "v/y::r5::c4"]
    assert [(p["replicates"], p["p_value"], p["significant_bh"]) for p in block["pairs"]] == [(0, None, None)]
    assert block["multiple_comparisons"]["pairs"] == 0
    assert block["ranks"]["replicates"] == 0
    assert block["ranks"]["models"]["v/x::r5::c4"]["point_rank"] == 1
