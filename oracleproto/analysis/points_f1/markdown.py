"""The points-f1 table as Markdown: what ``report --convention points-f1`` prints and writes.

Scores in points (0–100) with 2 decimals as the board prints them, rates as percentages, the
pairs that survive each adjustment, and every note (a model without an official score says why).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from oracleproto.analysis.multiple import sensitivity
from oracleproto.analysis.points_f1.compute import PointsF1Result
from oracleproto.analysis.points_f1.contract import NAME

HEADER = (
    "| Model | Score | 95% CI | Exact@1 | Pass@3 | Vote | Best-of-n | Random | USD/correct "
    "| P(rank 1) | Rank 95% |"
)
RULE = "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|"


def markdown_cell(text: str) -> str:
    """A model name as a table cell: a ``|`` would split the row (as Tables 3–5 escape it)."""
    return text.replace("|", "&#124;")


def _num(value: Any, scale: int = 1, decimals: int = 2) -> str:
    if value is None:
        return "—"
    return f"{float(Fraction(value) if isinstance(value, Fraction) else value) * scale:.{decimals}f}"


def _row(result: PointsF1Result, slug: str) -> str:
    v = result.summaries[slug]
    ranks = result.ranks if slug in result.compared else None
    interval = ranks.rank_interval(slug) if ranks is not None else None
    ci = "—" if v["score_ci_low"] is None else f"[{_num(v['score_ci_low'])}, {_num(v['score_ci_high'])}]"
    cells = [
        markdown_cell(result.shown(slug)),
        _num(v["score"]),
        ci,
        _num(v["exact_at_1"], 100),
        _num(v["pass_at_3"], 100),
        _num(v["vote_score"]),
        _num(v["best_of_n_score"]),
        _num(v["random_score"]),
        _num(v["usd_per_correct"], 1, 4),
        _num(ranks.p_rank(slug, 1), 1, 3) if ranks is not None else "—",
        "—" if interval is None else f"{interval[0]}–{interval[1]}",
    ]
    return "| " + " | ".join(cells) + " |"


def points_f1_markdown(result: PointsF1Result) -> str:
    """The table, then the pairwise-test lines, Kendall's τ and the notes."""
    n_q = len(result.panel.questions)
    lines = [
        f"Scoring convention: {NAME} — {n_q} questions every model was admitted to, "
        f"n = {result.panel.n}; bootstrap {result.iterations} × seed {result.seed}",
        "",
        HEADER,
        RULE,
        *(_row(result, slug) for slug in result.model_order),
        "",
        "Score, Vote, Best-of-n, Random: points-weighted (1/1/2/3), 0–100; Exact@1, Pass@3 in %.",
    ]
    if result.pairs:
        line = sensitivity(result.pairs)["line"]
        holm = [p for p in result.pairs if p.significant_holm]
        bh = [p for p in result.pairs if p.significant_bh]
        lines.append(f"Pairwise (paired bootstrap, two-sided): {line}.")
        for label, chosen in (("Benjamini–Hochberg", bh), ("Holm", holm)):
            shown = ", ".join(
                f"{markdown_cell(result.shown(p.a))} vs {markdown_cell(result.shown(p.b))}" for p in chosen
            )
            lines.append(f"Significant under {label}: {shown or 'none'}.")
    if result.ranks is not None:
        tau = result.ranks.tau_summary()
        if tau["mean"] is not None:
            lo, hi = tau["ci"]
            lines.append(
                f"Kendall τ-b, point ranking vs resample ranking: mean {tau['mean']:.3f} "
                f"[{lo:.3f}, {hi:.3f}] over {tau['replicates']} resamples."
            )
    lines += [f"note: {n}" for n in sorted(set(result.notes))]
    return "\n".join(lines) + "\n"
