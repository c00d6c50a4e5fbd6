"""``leaderboard.csv``: the board's rows, in board order, from the same document the page shows."""

from __future__ import annotations

import csv
import io
from typing import Any

from oracleproto.analysis.trials import BUCKETS
from oracleproto.primitives.safe_text import storable

#: ``model`` is the display name, ``slug`` the model configuration (``real/slug::rR::cC``).
COLUMNS = (
    "rank",
    "model",
    "slug",
    "run_id",
    "score",
    "score_ci_low",
    "score_ci_high",
    "p_rank_1",
    "rank_ci_low",
    "rank_ci_high",
    "exact_at_1",
    "pass_at_3",
    "vote_score",
    "best_of_n_score",
    "random_score",
    "usd_all_repeats",
    "usd_per_correct",
    "correct_per_usd",
    "cost_source",
    "pareto",
    *(f"score_{b}" for b in BUCKETS),
    "leak_loss_max",
    "score_leak_low",
    "score_ci_leak_low",
    "could_fall_below",
    "official_score",
    "no_score_reason",
    "viewer",
)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _row(model: dict[str, Any], names: dict[str, str]) -> list[str]:
    leak = model["leak"] or {}
    values = {
        **model,
        "rank": model["point_rank"],
        "model": model["name"],
        **{f"score_{b}": model["by_bucket"][b]["score"] for b in BUCKETS},
        "leak_loss_max": leak.get("loss_max"),
        "score_leak_low": leak.get("score_low"),
        "score_ci_leak_low": leak.get("ci_low"),
        "could_fall_below": "; ".join(names[m] for m in model["could_fall_below"]),
        "official_score": model["official"],
    }
    return [_cell(values[c]) for c in COLUMNS]


def leaderboard_csv(document: dict[str, Any]) -> str:
    """One row per model configuration (numbers as the document holds them, empty when undefined).

    Text is as the runs hold it, but a lone surrogate (a stranger's ``\\ud800`` in a name or a
    question id) becomes U+FFFD: a CSV is plain UTF-8 text, which cannot hold one.
    """
    names = {m["slug"]: m["name"] for m in document["models"]}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(_row(m, names) for m in document["models"])
    return storable(buffer.getvalue())
