"""Many models, honest comparisons: paired-bootstrap p-values, Holm and Benjamini–Hochberg.

Generic over the headline metric: the inputs are each model's replicate values under one shared
set of resamples (replicate r of every model comes from the same draw), so any convention's
bootstrap can be passed in. Replicate values are only compared, never summed, so ints, Fractions
and floats all work and the p-values are exact ratios of counts. A replicate that is undefined
for either model of a pair (None or NaN) is left out of that pair's test.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

Value = int | float | Fraction

#: The false-discovery / family-wise level of both adjustments.
Q_LEVEL = Fraction(1, 20)


@dataclass(frozen=True)
class PairTest:
    """One pair's paired-bootstrap test: replicates on each side of zero and the p-value."""

    replicates: int  # replicates defined for both models
    at_most_zero: int  # replicates with a − b ≤ 0
    at_least_zero: int  # replicates with a − b ≥ 0
    p_value: Fraction | None  # None without a defined replicate


def _clean(values: Sequence[Value | None]) -> list[Value | None]:
    """``values`` with NaN as None: one definedness test per value, not one per pair."""
    return [None if isinstance(v, float) and math.isnan(v) else v for v in values]


def paired_p_value(a: Sequence[Value | None], b: Sequence[Value | None]) -> PairTest:
    """Two-sided paired-bootstrap p-value of "a and b score alike" from shared replicates.

    p = min(1, 2·(1 + min(#{Δ* ≤ 0}, #{Δ* ≥ 0})) / (B + 1)), Δ* = a* − b* per replicate: the
    percentile test's two tails, with the +1 of Davison & Hinkley (1997, eq. 4.11) so that a
    finite number of replicates never claims p = 0. A replicate with Δ* = 0 counts on both sides,
    so two models with identical answers get p = 1.
    """
    if len(a) != len(b):
        raise ValueError(f"paired replicates differ in length: {len(a)} and {len(b)}")
    return _test(_clean(a), _clean(b))


def _test(a: Sequence[Value | None], b: Sequence[Value | None]) -> PairTest:
    """:func:`paired_p_value` of replicates already cleaned (undefined = None)."""
    le = ge = total = 0
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            continue
        total += 1
        le += x <= y
        ge += x >= y
    if total == 0:
        return PairTest(0, 0, 0, None)
    p = min(Fraction(1), Fraction(2 * (1 + min(le, ge)), total + 1))
    return PairTest(total, le, ge, p)


def holm(p_values: Sequence[Fraction]) -> list[Fraction]:
    """Holm (1979) step-down adjusted p-values, in the input's order.

    Sorted ascending, p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)); H_i is rejected at level α
    exactly when p̃_i ≤ α. Ties keep their input order (the adjusted values are the same).
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted: list[Fraction] = [Fraction(0)] * m
    running = Fraction(0)
    for rank, i in enumerate(order):
        running = max(running, min(Fraction(1), (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(p_values: Sequence[Fraction]) -> list[Fraction]:
    """Benjamini–Hochberg (1995) step-up adjusted p-values, in the input's order.

    Sorted ascending, p̃_(i) = min_{j ≥ i} min(1, m·p_(j)/j); the hypotheses with p̃ ≤ q are the
    ones the procedure rejects at false-discovery rate q.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted: list[Fraction] = [Fraction(0)] * m
    running = Fraction(1)
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, m * p_values[i] / (rank + 1))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class PairwiseComparison:
    """One pair (a before b in model order) with its raw and adjusted p-values."""

    a: str
    b: str
    test: PairTest
    p_holm: Fraction | None
    p_bh: Fraction | None

    @property
    def significant_holm(self) -> bool | None:
        """Survives Holm at :data:`Q_LEVEL` (None without a p-value)."""
        return None if self.p_holm is None else self.p_holm <= Q_LEVEL

    @property
    def significant_bh(self) -> bool | None:
        """Survives Benjamini–Hochberg at :data:`Q_LEVEL` (None without a p-value)."""
        return None if self.p_bh is None else self.p_bh <= Q_LEVEL


def compare_pairs(
    order: Sequence[str], replicates: Mapping[str, Sequence[Value | None]]
) -> list[PairwiseComparison]:
    """Every pair of ``order`` (a before b) tested, then adjusted over all pairs with a p-value."""
    cleaned = {m: _clean(replicates[m]) for m in order}
    lengths = {len(v) for v in cleaned.values()}
    if len(lengths) > 1:
        raise ValueError(f"models have different numbers of replicates: {sorted(lengths)}")
    tests = [(a, b, _test(cleaned[a], cleaned[b])) for a, b in itertools.combinations(order, 2)]
    family = [t.p_value for _, _, t in tests if t.p_value is not None]
    holm_values, bh_values = iter(holm(family)), iter(benjamini_hochberg(family))
    out = []
    for a, b, test in tests:
        defined = test.p_value is not None
        out.append(
            PairwiseComparison(
                a, b, test, next(holm_values) if defined else None, next(bh_values) if defined else None
            )
        )
    return out


def sensitivity(pairs: Sequence[PairwiseComparison]) -> dict[str, int | str]:
    """How many pairs each adjustment finds significant, and the line that says it."""
    tested = sum(p.test.p_value is not None for p in pairs)
    holm_n = sum(bool(p.significant_holm) for p in pairs)
    bh_n = sum(bool(p.significant_bh) for p in pairs)
    line = (
        f"{holm_n} of {tested} pairs significant under Holm, {bh_n} under Benjamini–Hochberg "
        f"(both at {float(Q_LEVEL):g})"
    )
    return {"pairs": tested, "significant_holm": holm_n, "significant_bh": bh_n, "line": line}
