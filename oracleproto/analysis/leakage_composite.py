"""The leakage bound (``leakage.py``) on the paper conventions' headline, composite accuracy.

Composite accuracy (Eq. composite-acc) is Σ_b w_b·E_b / W over the buckets b with a question (W =
Σ of their weights: ``paper`` yes/no 0.15, binary 0.15, pooled MC 0.70; ``reference-v4`` yes/no
0.15, binary 0.15, MC-single 0.28, MC-multi 0.42), with E_b the mean over b's |Q_b| questions of
the per-question exam mean over its c_q counted trials. Expanded, it is the sum over counted trials
(q, j) of

    contribution_qj = (w_b / W) · exam_qj / (|Q_b| · c_q),   exam_qj = tp_qj / m_q

for a parsed trial without a false positive (m_q = |gold|), else 0 (Eq. exam-score). The graded
trials are the counted ones (T = Σ_q c_q): not excluded by the cutoff, not a call error, parse
failures included — the same under both conventions, since both score the exam over them.
``report RUN --audit DIR --out OUT`` (``paper``, ``reference-v4``) writes the bounds beside the
tables it writes to OUT: the audit is not part of the run, so they never go into its sealed
``analysis/``.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from oracleproto.analysis import family_a as fa
from oracleproto.analysis.conventions import composite_weights
from oracleproto.analysis.exact import decimal
from oracleproto.analysis.leakage import (
    BOUNDS_FILE,
    LEAKAGE_FILE,
    AuditBound,
    Leakage,
    Shown,
    apply_bound,
    bound_lines,
    bound_rows,
    bounds_csv,
    leakage_json,
)
from oracleproto.analysis.reader import RunData
from oracleproto.analysis.report import AnalysisResult
from oracleproto.analysis.trials import TrialTable
from oracleproto.primitives.fileio import atomic_write_text

METRIC = "composite_accuracy"


def composite_contributions(t: TrialTable, weights: dict[str, float]) -> list[Fraction]:
    """Each counted trial's contribution to composite accuracy, exactly (0–1 scale)."""
    counted = np.asarray(t.counted)
    count = counted.sum(axis=1)
    defined = count > 0
    exact = counted & t.parsed & (t.fp == 0)
    members = {name: fa.bucket_members(t.bucket, name) & defined for name in weights}
    valid = {name: rows for name, rows in members.items() if rows.any()}
    total = sum((decimal(weights[name]) for name in valid), Fraction(0))
    out: list[Fraction] = []
    for name, rows in valid.items():
        share = decimal(weights[name]) / total / int(rows.sum())
        for q in np.flatnonzero(rows).tolist():
            m = max(int(t.m[q]), 1)
            for j in np.flatnonzero(counted[q]).tolist():
                tp = int(t.tp[q, j]) if exact[q, j] else 0
                out.append(share * Fraction(tp, m * int(count[q])))
    return out


def composite_leakage(run: RunData, result: AnalysisResult, audit: AuditBound) -> Leakage:
    """The bound of every model of ``run`` (all covered by its one audit)."""
    weights = composite_weights(result.convention)
    contributions = {m.slug: composite_contributions(m.table, weights) for m in run.models}
    point = {slug: result.models[slug][METRIC] for slug in result.model_order}
    audits = dict.fromkeys(result.model_order, audit)
    return apply_bound(METRIC, result.model_order, point, contributions, audits)


def composite_rows(result: AnalysisResult, leak: Leakage) -> list[dict[str, Any]]:
    """:func:`leakage.bound_rows` of every model, composite accuracy and its bootstrap interval."""
    point = {slug: result.models[slug][METRIC] for slug in result.model_order}
    interval: dict[str, tuple[float, float] | None] = {}
    for slug in result.model_order:
        ci = (result.models[slug].get("ci") or {}).get(METRIC)
        interval[slug] = None if ci is None else (ci[0], ci[1])
    return bound_rows(leak, result.model_order, point, interval)


def composite_lines(result: AnalysisResult, leak: Leakage) -> str:
    """What ``report --audit`` prints (composite accuracy's 4 decimals, as in Table 3)."""
    shown = Shown("composite accuracy", "Composite", 4, result.shown, {})
    return bound_lines(leak, composite_rows(result, leak), shown)


def write_composite_leakage(result: AnalysisResult, leak: Leakage, out: Path) -> list[Path]:
    """``leakage_bounds.csv`` and ``leakage.json`` into ``out`` (each written atomically)."""
    rows = composite_rows(result, leak)
    files = {
        BOUNDS_FILE: bounds_csv(rows, result.shown),
        LEAKAGE_FILE: leakage_json([result.run_id], result.convention.value, leak, rows),
    }
    for name, text in files.items():
        atomic_write_text(out / name, text)
    return [out / name for name in files]
