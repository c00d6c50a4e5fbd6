"""The points-f1 analysis of a run: every model's summary, intervals, pairwise tests and ranks.

Pure (writes nothing). Models without an official score (an incomplete question) keep their
row, with the reason, and are left out of the intervals, the pairwise tests and the ranks; the
resamples do not depend on which models are compared, so the others' numbers do not change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from oracleproto.analysis.cost import PriceTable, model_cost
from oracleproto.analysis.multiple import PairwiseComparison, compare_pairs, sensitivity
from oracleproto.analysis.names import recorded_display_names, shown_names
from oracleproto.analysis.points_f1.aggregate import incomplete_reason, summarize, trial_score_sd_pp
from oracleproto.analysis.points_f1.contract import ITERATIONS, SEED
from oracleproto.analysis.points_f1.panel import COUNTERS, Panel, build_panel
from oracleproto.analysis.points_f1.question import QuestionScore, score_question
from oracleproto.analysis.points_f1.resample import (
    SharedResamples,
    draw_indices,
    resamplable,
    shared_resamples,
)
from oracleproto.analysis.points_f1.selection import selection_diagnostics
from oracleproto.analysis.ranks import RankStability, rank_stability
from oracleproto.analysis.reader import ModelRun, RunData
from oracleproto.analysis.trials import BUCKETS


@dataclass(frozen=True)
class PointsF1Result:
    """Everything ``score_summary.csv``, ``score_by_type.csv``, ``score_pairs.csv`` and the JSON hold."""

    run_id: str
    model_order: tuple[str, ...]
    display_names: dict[str, str]
    panel: Panel
    #: Model → the ``score_summary.csv`` values after ``model`` (Fractions until rendered).
    summaries: dict[str, dict[str, Any]]
    #: Model → bucket → questions, points, score and the bucket's other summary values.
    by_type: dict[str, dict[str, dict[str, Any]]]
    diagnostics: dict[str, dict[str, Any]]
    #: Model → why it has no official score (absent: it has one).
    no_score: dict[str, str]
    iterations: int
    seed: int
    resampled: bool
    pairs: list[PairwiseComparison] = field(default_factory=list)
    #: (a, b) → delta interval of a pair in ``pairs``.
    pair_intervals: dict[tuple[str, str], tuple[float, float]] = field(default_factory=dict)
    ranks: RankStability | None = None
    notes: list[str] = field(default_factory=list)

    def shown(self, slug: str) -> str:
        """How tables name ``slug``."""
        return self.display_names.get(slug, slug)

    @property
    def compared(self) -> tuple[str, ...]:
        """Models with an official score, in plan order."""
        return tuple(m for m in self.model_order if m not in self.no_score)


def _cost_columns(m: ModelRun, prices: PriceTable | None) -> dict[str, Any]:
    """Cost of all repeats and per exact answer, over everything the model was billed for.

    The invoice covers every trial the model ran (all its admitted questions), so the counts
    are over the same trials: written, not excluded (call errors included: they may be billed).
    """
    t = m.table
    cost = model_cost(m.billing, m.real_slug, prices)
    usd = cost.model_cost_usd
    correct = int(t.correct.sum())
    return {
        "samples": int(t.eligible.sum()),
        "exact_correct_samples": correct,
        "usd_all_repeats": usd,
        "usd_per_correct": usd / correct if usd is not None and correct else None,
        "correct_per_usd": correct / usd if usd else None,
        "cost_source": cost.llm.source,
    }


def _model_rows(
    panel: Panel, m: ModelRun, scores: list[QuestionScore], prices: PriceTable | None
) -> dict[str, Any]:
    row: dict[str, Any] = {"sampling_n": panel.n, **summarize(scores)}
    row["trial_score_sd_pp"] = trial_score_sd_pp(scores) if panel.n > 1 else None
    for name in COUNTERS:
        total, count = panel.counters[m.slug][name]
        row[f"mean_{name}"] = Fraction(total, count) if count else None
    row["score_ci_low"] = row["score_ci_high"] = None
    row.update(_cost_columns(m, prices))
    return row


def analyze_points_f1(
    run: RunData,
    *,
    prices: PriceTable | None = None,
    display_names: Mapping[str, str] | None = None,
    iterations: int = ITERATIONS,
    seed: int = SEED,
) -> PointsF1Result:
    """Score ``run`` under the points-f1 contract (``display_names``: real slug → name)."""
    panel = build_panel(run)
    names = recorded_display_names(run) if display_names is None else dict(display_names)
    scores = {
        slug: [score_question(q, ts) for q, ts in zip(panel.questions, panel.trials[slug], strict=True)]
        for slug in panel.models
    }
    summaries: dict[str, dict[str, Any]] = {}
    by_type: dict[str, dict[str, dict[str, Any]]] = {}
    no_score: dict[str, str] = {}
    notes: list[str] = []
    for m in run.models:
        summaries[m.slug] = _model_rows(panel, m, scores[m.slug], prices)
        by_type[m.slug] = {
            name: summarize([s for s in scores[m.slug] if s.question.bucket == b])
            for b, name in enumerate(BUCKETS)
        }
        reason = incomplete_reason(scores[m.slug])
        if reason is not None:
            no_score[m.slug] = reason
            notes.append(f"{m.slug}: no official points-f1 score: {reason}")
    diagnostics = {slug: selection_diagnostics(panel.questions, panel.trials[slug]) for slug in panel.models}
    buckets = [q.bucket for q in panel.questions]
    compared = [slug for slug in panel.models if slug not in no_score]
    result = PointsF1Result(
        run_id=run.run_id,
        model_order=panel.models,
        display_names=shown_names(run.models, names),
        panel=panel,
        summaries=summaries,
        by_type=by_type,
        diagnostics=diagnostics,
        no_score=no_score,
        iterations=iterations,
        seed=seed,
        resampled=bool(compared) and resamplable(buckets, iterations),
        notes=notes,
    )
    if not result.resampled:
        if compared and iterations > 0:
            notes.append(
                "no bootstrap intervals: resampling needs two questions in one bucket of the population"
            )
        return result
    earned = {slug: [s.points * s.mean_credit for s in scores[slug]] for slug in compared}
    shared = shared_resamples(
        earned, [s.points for s in scores[compared[0]]], draw_indices(buckets, iterations, seed)
    )
    return _with_comparisons(result, shared, compared)


def _with_comparisons(result: PointsF1Result, shared: SharedResamples, compared: list[str]) -> PointsF1Result:
    """Attach score intervals, every pair's interval and tests, and the ranks."""
    for slug in compared:
        low, high = shared.score_interval(slug)
        result.summaries[slug].update(score_ci_low=low, score_ci_high=high)
    pairs = compare_pairs(compared, shared.sums)
    intervals = {(p.a, p.b): shared.difference_interval(p.a, p.b) for p in pairs}
    ranks = rank_stability(compared, shared.point, shared.sums)
    result.notes.append(f"points-f1 pairwise tests: {sensitivity(pairs)['line']}")
    return replace(result, pairs=pairs, pair_intervals=intervals, ranks=ranks)
