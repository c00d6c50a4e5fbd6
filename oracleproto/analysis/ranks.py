"""Rank stability of a headline metric over shared bootstrap resamples (issue 29 §2).

Generic over the metric: each model's point value and its replicate values under one shared set
of resamples (replicate r of every model from the same draw), higher is better. Values are only
compared, so ints, Fractions and floats all work; the reported numbers are ratios of counts,
except Kendall's τ-b, an exactly rounded square root of a ratio of pair counts.

Definitions (docs/design/metrics.md, "Conventions"):
- rank: competition ranking, 1 + the number of models strictly better, so models tied for first
  all have rank 1 (in the point ranking and in every replicate);
- a replicate counts only when every model is defined in it (None or NaN leaves it out);
- the 95 % rank interval: the 2.5 % and 97.5 % quantiles of the rank distribution taken as the
  smallest rank whose cumulative share reaches the level (inverted CDF), so both ends are ranks;
- Kendall's τ-b between the point ranking and each replicate's ranking (ties in either ranking
  handled by τ-b's denominator; undefined, and left out, when either ranking is all one tie).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from oracleproto.analysis.multiple import Value
from oracleproto.analysis.rational import CI_HIGH, CI_LOW, float_mean, percentile_interval, sqrt_ratio


def competition_ranks(values: Sequence[Value]) -> list[int]:
    """Rank of each value, higher is better: 1 + how many values are strictly greater."""
    ordered = sorted(values, reverse=True)
    first: dict[Value, int] = {}
    for position, value in enumerate(ordered):
        first.setdefault(value, position + 1)
    return [first[v] for v in values]


def kendall_tau_b(x: Sequence[int], y: Sequence[int]) -> float | None:
    """Kendall's τ-b of two rankings of the same items; None when either has no untied pair.

    τ-b = (C − D) / √((P − Tx)(P − Ty)) with C/D the concordant/discordant pairs, P all pairs,
    Tx/Ty the pairs tied in x/y (Kendall 1945); the square root of the exact ratio, rounded once.
    """
    n = len(x)
    concordant = discordant = tied_x = tied_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            tied_x += dx == 0
            tied_y += dy == 0
            product = dx * dy
            concordant += product > 0
            discordant += product < 0
    pairs = n * (n - 1) // 2
    denominator = (pairs - tied_x) * (pairs - tied_y)
    if denominator == 0:
        return None
    s = concordant - discordant
    magnitude = sqrt_ratio(s * s, denominator)
    return math.copysign(magnitude, s) if s else 0.0


def _defined(value: Value | None) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


@dataclass(frozen=True)
class RankStability:
    """Per model: point rank, rank counts over the replicates; Kendall τ-b per replicate."""

    order: tuple[str, ...]
    point_rank: dict[str, int]
    #: Model → counts[r − 1] = replicates in which it had rank r (r = 1 … number of models).
    rank_counts: dict[str, tuple[int, ...]]
    replicates: int
    taus: tuple[float, ...]

    def p_rank(self, model: str, rank: int) -> Fraction | None:
        """Share of replicates in which ``model`` had ``rank``."""
        if not self.replicates:
            return None
        return Fraction(self.rank_counts[model][rank - 1], self.replicates)

    def rank_interval(self, model: str) -> tuple[int, int] | None:
        """The 95 % rank interval (inverted-CDF 2.5 % and 97.5 % quantiles of the rank)."""
        if not self.replicates:
            return None
        return _inverted_cdf(self.rank_counts[model], CI_LOW), _inverted_cdf(self.rank_counts[model], CI_HIGH)

    def tau_summary(self) -> dict[str, Any]:
        """Mean of the defined τ-b values, their percentile interval and how many were defined."""
        interval = percentile_interval(Fraction(t) for t in self.taus)
        return {
            "mean": float_mean(self.taus),
            "ci": None if interval is None else [float(interval[0]), float(interval[1])],
            "replicates": len(self.taus),
        }

    def as_dict(self) -> dict[str, Any]:
        """The JSON block: per model point rank, P(rank 1), rank interval, rank distribution."""
        models: dict[str, Any] = {}
        for model in self.order:
            interval = self.rank_interval(model)
            p1 = self.p_rank(model, 1)
            models[model] = {
                "point_rank": self.point_rank[model],
                "p_rank_1": None if p1 is None else float(p1),
                "rank_ci": None if interval is None else list(interval),
                "rank_distribution": [
                    float(Fraction(c, self.replicates)) if self.replicates else None
                    for c in self.rank_counts[model]
                ],
            }
        return {"replicates": self.replicates, "models": models, "kendall_tau_b": self.tau_summary()}


def _inverted_cdf(counts: Sequence[int], level: Fraction) -> int:
    """The smallest rank r whose cumulative share of replicates is at least ``level``."""
    total, running = sum(counts), 0
    for rank, count in enumerate(counts, start=1):
        running += count
        if running >= level * total:
            return rank
    return len(counts)


def rank_stability(
    order: Sequence[str], point: Mapping[str, Value], replicates: Mapping[str, Sequence[Value | None]]
) -> RankStability:
    """Ranks of ``order``'s models by ``point`` and by each shared replicate (higher is better)."""
    models = tuple(order)
    point_ranks = competition_ranks([point[m] for m in models])
    lengths = {len(replicates[m]) for m in models}
    if len(lengths) > 1:
        raise ValueError(f"models have different numbers of replicates: {sorted(lengths)}")
    counts = {m: [0] * len(models) for m in models}
    rows: list[list[int]] = []
    for r in range(lengths.pop() if lengths else 0):
        row = [replicates[m][r] for m in models]
        if not all(_defined(v) for v in row):
            continue
        ranks = competition_ranks([v for v in row if v is not None])
        rows.append(ranks)
        for m, rank in zip(models, ranks, strict=True):
            counts[m][rank - 1] += 1
    return RankStability(
        order=models,
        point_rank=dict(zip(models, point_ranks, strict=True)),
        rank_counts={m: tuple(c) for m, c in counts.items()},
        replicates=len(rows),
        taus=_taus(point_ranks, rows),
    )


def _taus(point: Sequence[int], rows: Sequence[Sequence[int]]) -> tuple[float, ...]:
    """:func:`kendall_tau_b` of ``point`` against every row, on integer ranks with numpy.

    The same integer counts as the scalar function (signs of rank differences, all pairs at
    once), so exact; only the final √ of each ratio is a rounding, done once per row.
    """
    if not rows or len(point) < 2:
        return ()
    i, j = np.triu_indices(len(point), k=1)
    x = np.asarray(point, dtype=np.int64)
    y = np.asarray(rows, dtype=np.int64)
    sx = np.sign(x[i] - x[j])
    sy = np.sign(y[:, i] - y[:, j])
    s = (sy * sx[None, :]).sum(axis=1)  # concordant − discordant (ties contribute 0)
    pairs = len(i)
    untied_x = pairs - int(np.count_nonzero(sx == 0))
    untied_y = pairs - np.count_nonzero(sy == 0, axis=1)
    out = []
    for total, free_y in zip(s.tolist(), untied_y.tolist(), strict=True):
        denominator = untied_x * free_y
        if denominator:
            magnitude = sqrt_ratio(total * total, denominator)
            out.append(math.copysign(magnitude, total) if total else 0.0)
    return tuple(out)
