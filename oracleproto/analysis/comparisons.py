"""Pairwise tests and rank stability of any convention's headline metric (issue 29 §2).

``report.py``'s bootstrap already draws one shared set of resamples for every model
(``bootstrap.Replicates``); this turns a metric's replicates into exact values and runs
``multiple.py`` and ``ranks.py`` on them, so ``paper`` and ``reference-v4`` get the same
comparisons points-f1 reports. Models whose point value is undefined are left out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from oracleproto.analysis.bootstrap import Replicates
from oracleproto.analysis.multiple import Value, compare_pairs, sensitivity
from oracleproto.analysis.ranks import rank_stability


def exact_replicates(replicates: Replicates) -> list[Fraction | None]:
    """Every replicate's exact value (None where the statistic is undefined in that replicate)."""
    return [None if math.isnan(a) else replicates.exact(r) for r, a in enumerate(replicates.approx.tolist())]


def headline_comparisons(
    order: Sequence[str],
    point: Mapping[str, Value | None],
    replicates: Mapping[str, Sequence[Value | None]],
    *,
    metric: str,
) -> dict[str, Any]:
    """The JSON block: every pair's p-value (raw, Holm, BH), the sensitivity line, the ranks."""
    compared = [m for m in order if point.get(m) is not None]
    defined = {m: v for m, v in point.items() if v is not None and m in compared}
    pairs = compare_pairs(compared, replicates)
    ranks = rank_stability(compared, defined, {m: replicates[m] for m in compared}) if compared else None
    return {
        "metric": metric,
        "models": compared,
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "replicates": p.test.replicates,
                "p_value": _float(p.test.p_value),
                "p_holm": _float(p.p_holm),
                "p_bh": _float(p.p_bh),
                "significant_holm": p.significant_holm,
                "significant_bh": p.significant_bh,
            }
            for p in pairs
        ],
        "multiple_comparisons": sensitivity(pairs) if pairs else None,
        "ranks": ranks.as_dict() if ranks is not None else None,
    }


def _float(value: Fraction | None) -> float | None:
    return None if value is None else float(value)
