"""The points-f1 files: CSVs laid out like the upstream board's, a Markdown table, the JSON block.

Exact values are rounded once to a double, then, like ``summary.json``, to 6 decimals; CSV cells
are Python's shortest repr of that (``66.666667``), empty when undefined, ``true``/``false`` for
flags. Rows follow the run's plan order of models, so the same run gives the same bytes.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from oracleproto.analysis.multiple import sensitivity
from oracleproto.analysis.points_f1.compute import PointsF1Result
from oracleproto.analysis.points_f1.contract import CONTRACT, NAME
from oracleproto.analysis.points_f1.selection import FIELDS as SELECTION_FIELDS
from oracleproto.analysis.trials import BUCKETS
from oracleproto.analysis.writer import normalise

SCHEMA = "oracleproto-points-f1/1"
#: ``score_summary.csv``'s leading columns, in the upstream board's order (issue 29 §1).
SUMMARY_COLUMNS = (
    "model",
    "sampling_n",
    "questions",
    "complete_questions",
    "full_points",
    "earned_points_mean",
    "score",
    "exact_at_1",
    "pass_at_3",
    "pass_all_at_3",
    "majority_correct_at_3",
    "vote_score",
    "vote_exact",
    "vote_coverage",
    "vote_gain_pp",
    "pairwise_agreement",
    "agreement_questions",
    "valid_repeat_panel",
    "all_same",
    "all_same_wrong",
    "credit_sd",
    "best_of_n_score",
    "worst_of_n_score",
    "random_score",
    "trial_score_sd_pp",
    "mean_tool_calls_count",
    "mean_react_steps",
    "mean_latency_ms",
    "mean_prompt_tokens",
    "mean_completion_tokens",
    "mean_reasoning_tokens",
    "score_ci_low",
    "score_ci_high",
)
COST_COLUMNS = ("samples", "exact_correct_samples", "usd_all_repeats", "usd_per_correct", "correct_per_usd")
#: After the board's columns: where the cost comes from and why a model has no official score.
EXTRA_COLUMNS = ("cost_source", "official_score", "no_score_reason")
BY_TYPE_COLUMNS = (
    "model",
    "bucket",
    "questions",
    "points",
    "score",
    "complete_questions",
    "exact_at_1",
    "random_score",
)
PAIR_COLUMNS = (
    "model_a",
    "model_b",
    "delta_score_pp",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "p_bh",
    "significant_bh",
    "significant_holm",
)
DECIMALS = 6


def plain(value: Any) -> Any:
    """JSON-ready: Fractions rounded once to floats, then :func:`writer.normalise`'s rounding."""
    if isinstance(value, Fraction):
        return normalise(float(value))
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return normalise(value)


def cell(value: Any) -> str:
    """One CSV cell (see the module docstring)."""
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def csv_text(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A CSV file of ``rows`` under ``header``, each value a :func:`cell`."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([[cell(v) for v in row] for row in rows])
    return buffer.getvalue()


def score_summary_csv(result: PointsF1Result) -> str:
    """``score_summary.csv``: the board's columns, then cost, then status."""
    rows = []
    for slug in result.model_order:
        values = result.summaries[slug]
        reason = result.no_score.get(slug)
        rows.append(
            [
                result.shown(slug),
                *(values[c] for c in SUMMARY_COLUMNS[1:]),
                *(values[c] for c in COST_COLUMNS),
                values["cost_source"],
                reason is None,
                reason,
            ]
        )
    return csv_text([*SUMMARY_COLUMNS, *COST_COLUMNS, *EXTRA_COLUMNS], rows)


def score_by_type_csv(result: PointsF1Result) -> str:
    """``score_by_type.csv``: per model and bucket its questions, points and score."""
    rows = []
    for slug in result.model_order:
        for bucket in BUCKETS:
            values = result.by_type[slug][bucket]
            rows.append(
                [
                    result.shown(slug),
                    bucket,
                    values["questions"],
                    values["full_points"],
                    values["score"],
                    values["complete_questions"],
                    values["exact_at_1"],
                    values["random_score"],
                ]
            )
    return csv_text(BY_TYPE_COLUMNS, rows)


def pair_rows(result: PointsF1Result) -> list[dict[str, Any]]:
    """Every compared pair: Δ score (pp, a − b), its interval, raw and adjusted p-values, flags."""
    rows = []
    for pair in result.pairs:
        low, high = result.pair_intervals[(pair.a, pair.b)]
        rows.append(
            {
                "model_a": pair.a,
                "model_b": pair.b,
                "delta_score_pp": result.summaries[pair.a]["score"] - result.summaries[pair.b]["score"],
                "ci_low": low,
                "ci_high": high,
                "p_value": pair.test.p_value,
                "p_holm": pair.p_holm,
                "p_bh": pair.p_bh,
                "significant_bh": pair.significant_bh,
                "significant_holm": pair.significant_holm,
                "replicates": pair.test.replicates,
            }
        )
    return rows


def score_pairs_csv(result: PointsF1Result) -> str:
    """``score_pairs.csv``: one row per pair of models with an official score."""
    rows = [
        [result.shown(r["model_a"]), result.shown(r["model_b"]), *(r[c] for c in PAIR_COLUMNS[2:])]
        for r in pair_rows(result)
    ]
    return csv_text(PAIR_COLUMNS, rows)


def score_ranks_csv(result: PointsF1Result) -> str:
    """``score_ranks.csv``: point rank, P(rank 1), 95 % rank interval, then P(rank = r) as ``rank_r``."""
    ranks = result.ranks
    models = result.compared if ranks is not None else ()
    header = ["model", "score", "point_rank", "p_rank_1", "rank_ci_low", "rank_ci_high"]
    # The distribution: the share of resamples in which the model had rank r.
    header += [f"rank_{r}" for r in range(1, len(models) + 1)]
    rows = []
    for slug in models:
        assert ranks is not None
        interval = ranks.rank_interval(slug)
        rows.append(
            [
                result.shown(slug),
                result.summaries[slug]["score"],
                ranks.point_rank[slug],
                ranks.p_rank(slug, 1),
                *(interval or (None, None)),
                *(ranks.p_rank(slug, r) for r in range(1, len(models) + 1)),
            ]
        )
    return csv_text(header, rows)


def selection_csv(result: PointsF1Result) -> str:
    """``selection_diagnostics.csv``: the MC-multi diagnostics with their denominators."""
    counts = (
        "multi_slots",
        "valid_multi_slots",
        "valid_multi_questions",
        "valid_multi_rate",
        "fpr_questions",
    )
    header = ["model", *counts, "select_all_f1", *SELECTION_FIELDS]
    rows = [
        [result.shown(slug), *(result.diagnostics[slug][c] for c in header[1:])]
        for slug in result.model_order
    ]
    return csv_text(header, rows)


def points_f1_block(result: PointsF1Result) -> dict[str, Any]:
    """The ``points_f1`` object of ``summary.json`` (JSON-ready)."""
    panel = result.panel
    models = {}
    for slug in result.model_order:
        models[slug] = {
            **result.summaries[slug],
            "official_score": slug not in result.no_score,
            "no_score_reason": result.no_score.get(slug),
            "admitted_questions": panel.admitted[slug],
            "by_type": result.by_type[slug],
            "selection": result.diagnostics[slug],
        }
    block = {
        "contract": CONTRACT,
        "population": {
            "questions": len(panel.questions),
            "question_ids": [q.id for q in panel.questions],
            "by_bucket": {b: sum(q.bucket == i for q in panel.questions) for i, b in enumerate(BUCKETS)},
            "sampling_n": panel.n,
        },
        "model_order": list(result.model_order),
        "display_names": result.display_names,
        "bootstrap": {
            "iterations": result.iterations,
            "seed": result.seed,
            "resampled": result.resampled,
            "strata": list(BUCKETS),
            "draw": "random.Random(seed).choice per bucket question, buckets in strata order",
        },
        "models": models,
        "pairs": pair_rows(result),
        "multiple_comparisons": sensitivity(result.pairs) if result.pairs else None,
        "ranks": result.ranks.as_dict() if result.ranks is not None else None,
        "notes": sorted(set(result.notes)),
    }
    return dict(plain(block))


def summary_json(result: PointsF1Result) -> str:
    """The points-f1 ``summary.json``: schema, run, convention and the ``points_f1`` block."""
    document = {
        "schema": SCHEMA,
        "run_id": result.run_id,
        "convention": NAME,
        "points_f1": points_f1_block(result),
    }
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"
