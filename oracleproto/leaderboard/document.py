"""The leaderboard's document: every number the page and ``leaderboard.csv`` show, JSON-ready.

Numbers are the points-f1 report's (``analysis/points_f1``), rounded once to doubles and then to 6
decimals like its ``summary.json``; the page only formats them. Rows are in board order: models
with an official score by point rank (ties in plan order), then those without one.
"""

from __future__ import annotations

from typing import Any

from oracleproto._version import __version__
from oracleproto.analysis.leakage import RULE, Leakage
from oracleproto.analysis.multiple import Q_LEVEL, sensitivity
from oracleproto.analysis.points_f1.compute import PointsF1Result
from oracleproto.analysis.points_f1.contract import NAME
from oracleproto.analysis.points_f1.leakage import points_f1_rows
from oracleproto.analysis.points_f1.render import pair_rows, plain
from oracleproto.analysis.trials import BUCKETS
from oracleproto.leaderboard.pareto import pareto_front
from oracleproto.leaderboard.sources import Board

SCHEMA = "oracleproto-leaderboard/1"
#: Summary values each row carries as they are (``score_summary.csv``'s names).
ROW_VALUES = (
    "score",
    "score_ci_low",
    "score_ci_high",
    "exact_at_1",
    "pass_at_3",
    "majority_correct_at_3",
    "vote_score",
    "best_of_n_score",
    "random_score",
    "questions",
    "complete_questions",
    "usd_all_repeats",
    "usd_per_correct",
    "correct_per_usd",
    "cost_source",
)


def board_order(result: PointsF1Result) -> list[str]:
    """Models with an official score by point rank (plan order among ties), then the others."""
    ranks = result.ranks
    compared = list(result.compared)
    if ranks is not None:
        compared.sort(key=lambda m: ranks.point_rank[m])
    else:
        compared.sort(key=lambda m: -result.summaries[m]["score"])
    return compared + [m for m in result.model_order if m in result.no_score]


def _rank_values(result: PointsF1Result, slug: str) -> dict[str, Any]:
    ranks = result.ranks
    if ranks is None or slug not in result.compared:
        return {"point_rank": None, "p_rank_1": None, "rank_ci_low": None, "rank_ci_high": None}
    interval = ranks.rank_interval(slug)
    return {
        "point_rank": ranks.point_rank[slug],
        "p_rank_1": ranks.p_rank(slug, 1),
        "rank_ci_low": None if interval is None else interval[0],
        "rank_ci_high": None if interval is None else interval[1],
    }


def _leak_values(leak: Leakage | None, row: dict[str, Any] | None) -> dict[str, Any] | None:
    if leak is None or row is None or row["trials"] is None:
        return None
    audit = leak.audits[row["model"]]
    return {
        "trials": row["trials"],
        "leaked_trials_bound": row["leaked_trials_bound"],
        "loss_max": row["leak_loss_max"],
        "score_low": row["value_leak_low"],
        "ci_low": row["ci_leak_low"],
        "audit_fn": audit.fn,
        "audit_n": audit.n,
        "fn_rate_upper": audit.upper,
    }


def _model(
    board: Board,
    result: PointsF1Result,
    slug: str,
    *,
    front: list[str],
    leak: Leakage | None,
    leak_rows: dict[str, dict[str, Any]],
) -> dict[str, Any]:
    source = board.origin[slug]
    models = [m.slug for m in source.data.models]
    index = models.index(slug)
    values = result.summaries[slug]
    return {
        "slug": slug,
        "real_slug": source.data.models[index].real_slug,
        "name": result.shown(slug),
        "run_id": source.run_id,
        # The viewer's question list of this model (its hash route; the model's index in its run).
        "viewer": f"{source.viewer}#/questions/{index}",
        "official": slug not in result.no_score,
        "no_score_reason": result.no_score.get(slug),
        **{key: values[key] for key in ROW_VALUES},
        **_rank_values(result, slug),
        "pareto": slug in front,
        "by_bucket": {
            b: {k: result.by_type[slug][b][k] for k in ("score", "questions", "full_points")} for b in BUCKETS
        },
        "leak": _leak_values(leak, leak_rows.get(slug)),
        "could_fall_below": [] if leak is None else leak.falls_below(slug),
    }


def _front(result: PointsF1Result) -> list[str]:
    """The Pareto front of cost per correct answer against score (models with both)."""
    points = {}
    for slug in result.compared:
        cost = result.summaries[slug]["usd_per_correct"]
        if cost is not None:
            points[slug] = (cost, result.summaries[slug]["score"])
    return pareto_front(points)


def _leakage(leak: Leakage) -> dict[str, Any]:
    """The rule, the audits (each once) and the orders the bound could flip."""
    audits = {a.where.as_posix(): a.as_dict() for a in leak.audits.values()}
    return {
        "rule": RULE,
        "audits": [audits[k] for k in sorted(audits)],
        "could_flip": [list(p) for p in leak.flips],
    }


def build_board_document(
    board: Board, result: PointsF1Result, leak: Leakage | None, *, viewers_written: set[str]
) -> dict[str, Any]:
    """The whole document (JSON-ready: Fractions rounded, see the module docstring).

    ``viewers_written``: the viewer files written beside the board (a row links to its run's).
    """
    front = _front(result)
    leak_rows = {r["model"]: r for r in points_f1_rows(result, leak)} if leak is not None else {}
    panel = result.panel
    tau = result.ranks.tau_summary() if result.ranks is not None else None
    document = {
        "schema": SCHEMA,
        "generator": f"oracleproto {__version__}",
        "convention": NAME,
        "runs": [
            {
                "run_id": s.run_id,
                "source": s.ref,
                "viewer": s.viewer,
                "viewer_written": s.viewer in viewers_written,
                "models": len(s.data.models),
            }
            for s in board.sources
        ],
        "population": {
            "questions": len(panel.questions),
            "by_bucket": {b: sum(q.bucket == i for q in panel.questions) for i, b in enumerate(BUCKETS)},
            "sampling_n": panel.n,
        },
        "bootstrap": {"iterations": result.iterations, "seed": result.seed, "resampled": result.resampled},
        "level": Q_LEVEL,
        "models": [
            _model(board, result, slug, front=front, leak=leak, leak_rows=leak_rows)
            for slug in board_order(result)
        ],
        "pareto_front": front,
        "pairs": pair_rows(result),
        "multiple_comparisons": sensitivity(result.pairs) if result.pairs else None,
        "kendall_tau_b": tau,
        "leakage": None if leak is None else _leakage(leak),
        "notes": sorted(set(result.notes) | set(board.notes)),
    }
    return dict(plain(document))
