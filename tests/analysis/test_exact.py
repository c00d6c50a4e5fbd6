"""Reported numbers are exact or exactly rounded, so neither summation order, numpy nor BLAS moves them.

The committed demo has a bootstrap bound whose exact value, 28161/48000 = 0.5866875, lies on a
rounding boundary of the six decimals ``summary.json`` keeps: the float bootstrap rounded it to
0.586687 with OpenBLAS's Haswell kernel and to 0.586688 with its SkylakeX kernel.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest

from oracleproto.analysis import Convention, analyze_run, read_run
from oracleproto.analysis import exact as ex
from oracleproto.analysis import family_a as fa
from oracleproto.analysis.bootstrap import (
    CI_QUANTILES,
    RatioColumns,
    Replicates,
    exact_ci,
    percentile_ci,
    resample_counts,
)
from oracleproto.analysis.conventions import composite_weights
from oracleproto.analysis.writer import normalise
from oracleproto.verify.demo import find_demo_run

#: The demo's paired bound: composite accuracy, careful − sloppy, 97.5 %.
BOUNDARY = Fraction(28161, 48000)
CAREFUL, SLOPPY = "sim/careful::r5::c4", "sim/sloppy::r5::c4"


def _type7(values: list[Fraction], p: Fraction) -> Fraction:
    j, g = ex.quantile_position(len(values), p)
    return values[j] if g == 0 else values[j] + g * (values[j + 1] - values[j])


def _brute_force_ci(stat: RatioColumns, counts: np.ndarray) -> tuple[float, float]:
    """The interval from first principles: every replicate in Fractions, question by question."""
    values = []
    for row in counts.tolist():
        value, weight = Fraction(0), Fraction(0)
        for c, w in enumerate(stat.weights):
            bottom = sum(k * int(x) for k, x in zip(row, stat.den[:, c], strict=True))
            if bottom:
                top = sum(
                    Fraction(k * int(a), int(d))
                    for k, a, d in zip(row, stat.a[:, c], stat.d[:, c], strict=True)
                )
                value, weight = value + w * top / bottom, weight + w
        if weight:
            values.append(value / weight)
    values.sort()
    lo, hi = (_type7(values, p) for p in CI_QUANTILES)
    return float(lo), float(hi)


def _statistic(rng: np.random.Generator, questions: int, denominators: list[int]) -> RatioColumns:
    """Per-question values a/d in [0, 1] over three bucket columns, like composite accuracy."""
    bucket = rng.integers(0, 3, size=questions)
    d = rng.choice(denominators, size=questions)
    a = rng.integers(0, d + 1)
    member = np.stack([bucket == c for c in range(3)], axis=1).astype(np.int64)
    return RatioColumns(
        a[:, None] * member,
        np.repeat(d[:, None], 3, axis=1).astype(np.int64),
        member,
        (Fraction(3, 20), Fraction(3, 20), Fraction(7, 10)),
    )


def _permuted(stat: RatioColumns, order: np.ndarray) -> RatioColumns:
    return RatioColumns(stat.a[order], stat.d[order], stat.den[order], stat.weights)


def test_the_demo_bound_on_a_rounding_boundary_is_its_exact_value() -> None:
    result = analyze_run(find_demo_run(), "paper", bootstrap_samples=1000)
    (pair,) = [
        p
        for p in result.paired_differences
        if (p["a"], p["b"], p["metric"]) == (CAREFUL, SLOPPY, "composite_accuracy")
    ]
    # Exactly 0.5866875 (= 0.586666… + 0.025 · (0.5875 − 0.586666…)), rounded once: just above the
    # boundary, so 0.586688; the float just below it (where the Haswell kernel landed) is 0.586687.
    assert pair["ci"][1] == float(BOUNDARY)
    assert normalise(pair["ci"][1]) == 0.586688
    assert normalise(math.nextafter(float(BOUNDARY), 0.0)) == 0.586687
    published = json.loads((find_demo_run() / "analysis" / "summary.json").read_text(encoding="utf-8"))
    cis = [
        p["ci"]
        for p in published["paired_differences"]
        if (p["a"], p["b"], p["metric"]) == (CAREFUL, SLOPPY, "composite_accuracy")
    ]
    assert cis == [[0.288323, 0.586688]]


def test_bootstrap_bounds_are_the_exact_quantiles_in_any_question_order() -> None:
    rng = np.random.default_rng(7)
    stat = _statistic(rng, 14, [1, 2, 3, 4, 6])
    strata = np.asarray(stat.den.argmax(axis=1), dtype=np.int64)
    counts = resample_counts(strata, 300, seed=11)
    expected = _brute_force_ci(stat, counts)
    draws = Replicates.draw(stat, counts)
    assert exact_ci(draws.approx, draws.exact) == expected
    # Another question order is another summation order for any matrix kernel: the same bounds.
    for seed in range(3):
        order = np.random.default_rng(seed).permutation(14)
        shuffled = Replicates.draw(_permuted(stat, order), counts[:, order])
        assert exact_ci(shuffled.approx, shuffled.exact) == expected


@pytest.mark.parametrize(
    ("denominators", "python_integers"),
    [
        ([1009, 1013], False),  # partial sums below 2^50: integer-valued doubles through BLAS
        ([10007, 10009, 10037], False),  # up to 2^62: numpy's int64 product
        ([1_000_003, 998_244_353, 1_000_000_007, 999_999_937], True),  # lcm far beyond int64
    ],
)
def test_large_denominators_stay_exact(denominators: list[int], python_integers: bool) -> None:
    rng = np.random.default_rng(3)
    stat = _statistic(rng, 12, denominators)
    counts = resample_counts(np.asarray(stat.den.argmax(axis=1), dtype=np.int64), 200, seed=5)
    draws = Replicates.draw(stat, counts)
    assert (draws.top.dtype == object) is python_integers
    assert exact_ci(draws.approx, draws.exact) == _brute_force_ci(stat, counts)


def test_quantile_selection_orders_values_its_approximations_cannot() -> None:
    # Exact values 1e-12 apart whose approximations (each within the selection margin) run in
    # the opposite order: the order statistics are still the exact ones, not the approximations'.
    exact_values = [Fraction(i, 10**12) for i in range(8)]
    approx = np.asarray([(7 - i) * 1e-12 for i in range(8)], dtype=np.float64)
    ps = (Fraction(1, 40), Fraction(39, 40), Fraction(1, 2))
    chosen = ex.select_quantile(approx, lambda i: exact_values[i], ps)
    # Type 7 over 8 values: positions 0.175, 6.825 and 3.5.
    assert chosen == [float(Fraction(7, 40 * 10**12)), float(Fraction(6825, 1000 * 10**12)), 3.5e-12]
    # NaN approximations are undefined replicates, left out; none defined gives no interval.
    approx[0] = np.nan
    assert ex.select_quantile(approx, lambda i: exact_values[i], (Fraction(0),)) == [1e-12]
    assert ex.select_quantile(np.full(3, np.nan), lambda i: Fraction(0), ps) is None


def test_a_sum_is_exactly_rounded_in_every_order_and_numpy_sums_for_older_revisions() -> None:
    values = [1e16, 1.0, -1e16, 1.0]
    assert {ex.total(list(order)) for order in itertools.permutations(values)} == {2.0}
    assert ex.mean(values) == 0.5
    with ex.reductions_of(3):
        # numpy adds left to right here: 1e16 + 1 rounds back to 1e16, one 1.0 is lost.
        assert ex.total(values) == 1.0
    assert ex.total(values) == 2.0  # the block restores exact sums


def test_float_quantiles_interpolate_exactly() -> None:
    values = [0.1, 0.2, 0.7]
    expected = Fraction(0.1) + Fraction(1, 2) * (Fraction(0.2) - Fraction(0.1))
    assert ex.quantile(values, [Fraction(1, 4)]) == [float(expected)]
    assert ex.quantile([3.0], [Fraction(1, 40), Fraction(39, 40)]) == [3.0, 3.0]
    draws = np.asarray([np.nan, 0.25, 0.5, np.nan, 0.75])
    assert percentile_ci(draws) == (0.2625, 0.7375)  # positions 0.05 and 1.95 of three values
    assert percentile_ci(np.full(2, np.nan)) is None


def test_logarithms_come_from_the_c_library() -> None:
    shares = np.asarray([[1 / 3, 2 / 3], [0.0, 1.0]])
    logs = ex.log2(shares)
    assert logs[0].tolist() == [math.log2(1 / 3), math.log2(2 / 3)]
    assert logs[1, 0] == -math.inf and logs[1, 1] == 0.0
    assert ex.log(np.asarray([math.e, -1.0]))[0] == math.log(math.e)
    assert math.isnan(ex.log(np.asarray([-1.0]))[0])


def test_decimal_weights_and_fraction_sums_are_exact() -> None:
    assert ex.decimal(0.15) == Fraction(3, 20) != Fraction(0.15)
    assert ex.fraction_sum([1, 2, 1], [3, 3, 4]) == Fraction(1, 3) + Fraction(2, 3) + Fraction(1, 4)
    assert ex.fraction_sum([], []) == 0


@pytest.mark.parametrize("convention", ["paper", "reference-v4"])
def test_points_are_exact_values_rounded_once(convention: str) -> None:
    conv = Convention(convention)
    result = analyze_run(find_demo_run(), conv, bootstrap_samples=50)
    weights = {b: Fraction(repr(w)) for b, w in composite_weights(conv).items()}
    for m in read_run(find_demo_run()).models:
        entry = result.models[m.slug]
        exam = fa.bucket_exam_exact(m.table)
        for name, value in entry["exam_avg"].items():
            assert value == (None if exam[name] is None else float(exam[name]))
        assert entry["pass_at_1_avg"] == float(fa.pass_exact(m.table, conv))
        # Composite: from the published bucket means, exactly, rounded once (reproducible from them).
        means = {**entry["exam_avg"], "mc": entry["exam_avg_mc_pooled"]}
        valid = {b: w for b, w in weights.items() if means[b] is not None}
        expected = sum(w * Fraction(means[b]) for b, w in valid.items()) / sum(valid.values())
        assert entry["composite_accuracy"] == float(expected)
    for pair in result.paired_differences:
        a, b = (result.models[pair[k]][pair["metric"]] for k in ("a", "b"))
        assert pair["difference"] == a - b
