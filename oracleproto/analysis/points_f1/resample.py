"""The contract's paired bootstrap: question clusters stratified by bucket, shared by every model.

Draws are made exactly as the upstream board makes them — ``random.Random(seed)``, and for each
iteration, bucket by bucket in ``trials.BUCKETS`` order, ``choice(bucket's questions)`` as many
times as the bucket holds questions (question ids sorted) — so the same seed gives the same
resamples for the same population, and the intervals can be laid beside the board's.

Every bucket keeps its size in a resample, so Σ points is the same in every replicate and a
replicate's score is 100·Σ_i v[i] / (Σ points) over the drawn questions' earned points v. Those
are brought to one integer scale D shared by every model (the lcm of their denominators), so a
replicate is an exact integer sum, differences between models are integer differences, and the
percentile bounds are exact type-7 quantiles rounded once.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from oracleproto.analysis.rational import CI_HIGH, CI_LOW, quantile7
from oracleproto.analysis.trials import BUCKETS

#: Integer sums stay below this in int64 (each replicate adds Q values); larger scales use Python ints.
_INT64_SAFE = 2**62


def draw_indices(buckets: Sequence[int], iterations: int, seed: int) -> list[list[int]]:
    """Per iteration, the drawn question positions (the upstream board's draw, see module doc)."""
    strata = [[i for i, b in enumerate(buckets) if b == s] for s in range(len(BUCKETS))]
    choice = random.Random(seed).choice
    return [[choice(stratum) for stratum in strata for _ in stratum] for _ in range(iterations)]


def resamplable(buckets: Sequence[int], iterations: int) -> bool:
    """Whether resampling can vary anything: iterations asked, ≥ 2 questions, a bucket with ≥ 2."""
    sizes = [sum(b == s for b in buckets) for s in range(len(BUCKETS))]
    return iterations > 0 and len(buckets) >= 2 and max(sizes) >= 2


@dataclass(frozen=True)
class SharedResamples:
    """Every model's replicate sums on one integer scale; ``unit`` turns a sum into a score."""

    unit: Fraction  # score = sum · unit
    point: dict[str, int]
    sums: dict[str, list[int]]

    def score(self, model: str) -> Fraction:
        """The point score, exactly."""
        return self.point[model] * self.unit

    def score_interval(self, model: str) -> tuple[float, float]:
        """The model's 95 % percentile interval."""
        return self._interval(self.sums[model])

    def difference_interval(self, a: str, b: str) -> tuple[float, float]:
        """The 95 % percentile interval of score(a) − score(b) over the shared replicates."""
        return self._interval([x - y for x, y in zip(self.sums[a], self.sums[b], strict=True)])

    def _interval(self, values: Sequence[int]) -> tuple[float, float]:
        ordered = sorted(values)
        return float(quantile7(ordered, CI_LOW) * self.unit), float(quantile7(ordered, CI_HIGH) * self.unit)


def shared_resamples(
    earned: Mapping[str, Sequence[Fraction]], points: Sequence[int], indices: Sequence[Sequence[int]]
) -> SharedResamples:
    """Replicate sums of each model's per-question earned points (points·mean credit) under ``indices``."""
    scale = math.lcm(1, *(v.denominator for values in earned.values() for v in values))
    full = sum(points)
    scaled = {m: [int(v * scale) for v in values] for m, values in earned.items()}
    largest = max((abs(x) for values in scaled.values() for x in values), default=0)
    exact_in_int64 = largest * max(len(points), 1) < _INT64_SAFE
    draws = np.asarray(indices, dtype=np.int64).reshape(len(indices), len(points))
    sums: dict[str, list[int]] = {}
    for model, values in scaled.items():
        column = np.asarray(values, dtype=np.int64 if exact_in_int64 else object)
        # Integer sums: exact and independent of the order numpy adds them in.
        sums[model] = [int(x) for x in column[draws].sum(axis=1)] if len(indices) else []
    return SharedResamples(
        unit=Fraction(100, scale * full) if full else Fraction(0),
        point={m: sum(values) for m, values in scaled.items()},
        sums=sums,
    )
