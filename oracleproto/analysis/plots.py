"""Plots (300 dpi PNG and SVG) with deterministic bytes: fixed hash salt, no dates, no random ids.

Models are labelled with their display names; error bars are the bootstrap's 95% intervals where
the analysis has them (composite accuracy, pass@1). An undefined bucket is drawn as missing
("n/a"), never as a 0.0 bar, and a run without any cost gets no cost plot (a note in the
analysis says why) rather than an empty one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.layout_engine import TightLayoutEngine

from oracleproto.analysis.cost import cost_points
from oracleproto.analysis.report import AnalysisResult

DPI = 300
_RC: Any = {
    "svg.hashsalt": "oracleproto-analysis",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "legend.fontsize": 8,
}
_SVG_META: dict[str, Any] = {"Date": None, "Creator": "oracleproto"}
_PNG_META: dict[str, Any] = {"Software": "oracleproto"}
BUCKET_LABELS = {"yes_no": "Yes/No", "binary": "Binary", "mc_single": "MC Single", "mc_multi": "MC Multi"}
COST_PLOT = "cost_vs_composite"


def pareto_frontier(points: list[tuple[str, float, float]]) -> list[str]:
    """Names of (name, cost, accuracy) points not dominated by a cheaper-or-equal, better-or-equal one."""
    frontier: list[str] = []
    best = float("-inf")
    for name, _cost, acc in sorted(points, key=lambda p: (p[1], -p[2], p[0])):
        if acc > best:
            frontier.append(name)
            best = acc
    return frontier


def _tight_layout(fig: Figure) -> None:
    """What ``fig.tight_layout()`` does (the same engine, parameters and subplot adjustment), minus
    the placeholder layout engine it leaves on the figure: with one, every ``savefig`` first draws
    the whole figure once more with rendering disabled (a quarter of the plots' time) to run a
    layout that does nothing. The files are byte for byte the same (the demo's plots prove it)."""
    # rect=None exactly as tight_layout passes it (the stubs admit only a tuple: another code path).
    no_rect: Any = None
    TightLayoutEngine(pad=1.08, h_pad=None, w_pad=None, rect=no_rect).execute(fig)


def _save(fig: Figure, out: Path, stem: str) -> list[Path]:
    paths = [out / f"{stem}.png", out / f"{stem}.svg"]
    canvas = fig.canvas
    fig.savefig(paths[0], format="png", dpi=DPI, metadata=_PNG_META)
    fig.savefig(paths[1], format="svg", metadata=_SVG_META)
    plt.close(fig)
    # The Agg canvas keeps its renderer, a 300 dpi RGBA buffer (≈ 13 MB), and the figure and canvas
    # refer to each other, so it lived until a garbage collection: each plot added its buffer to the
    # analysis's peak (issue 18). Dropping it frees the buffer now; the files are already written.
    vars(canvas).pop("renderer", None)
    return paths


def _yerr(value: float, ci: Any) -> tuple[float, float] | None:
    """Below/above distances of a CI around ``value`` (None when the bootstrap gave none)."""
    if not ci:
        return None
    lo, hi = float(ci[0]), float(ci[1])
    return max(0.0, value - lo), max(0.0, hi - value)


def write_plots(result: AnalysisResult, out: Path) -> list[Path]:
    """Cost vs composite (Pareto frontier; skipped without cost), per-bucket bars, pass@1 with CIs."""
    written: list[Path] = []
    with plt.rc_context(_RC):
        written += _cost_plot(result, out)
        written += _bucket_plot(result, out)
        written += _pass_plot(result, out)
    return written


def _bucket_plot(result: AnalysisResult, out: Path) -> list[Path]:
    slugs = list(result.model_order)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    buckets = tuple(BUCKET_LABELS)
    width = 0.8 / max(1, len(slugs))
    for i, slug in enumerate(slugs):
        values = [result.models[slug]["exam_avg"][b] for b in buckets]
        xs = [b + i * width for b in range(len(buckets))]
        color = f"C{i % 10}"
        drawn = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        # A missing bucket is not a score of 0: leave the slot empty and say so on the axis.
        ax.bar([x for x, _ in drawn], [v for _, v in drawn], width, label=result.shown(slug), color=color)
        for x, v in zip(xs, values, strict=True):
            if v is None:
                ax.text(x, 0.02, "n/a", ha="center", va="bottom", rotation=90, fontsize=7, color=color)
    ax.set_xticks([b + 0.4 - width / 2 for b in range(len(buckets))], list(BUCKET_LABELS.values()))
    ax.set_ylabel("exam mean")
    ax.set_ylim(0, 1)
    ax.set_title(f"Per-bucket exam mean (convention: {result.convention.value}; n/a: no question)")
    _legend(ax, len(slugs))
    _tight_layout(fig)
    return _save(fig, out, "buckets")


def _pass_plot(result: AnalysisResult, out: Path) -> list[Path]:
    slugs = list(result.model_order)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for i, slug in enumerate(slugs):
        e = result.models[slug]
        lo, mid, hi = e["pass_all_at_n"], e["pass_at_1_avg"], e["pass_any_at_n"]
        if mid is None:
            ax.text(i, 0.02, "n/a", ha="center", va="bottom", fontsize=7)
            continue
        ax.vlines(i, lo if lo is not None else mid, hi if hi is not None else mid, color="0.75", linewidth=6)
        err = _yerr(mid, (e.get("ci") or {}).get("pass_at_1_avg"))
        ax.errorbar(
            [i],
            [mid],
            yerr=None if err is None else [[err[0]], [err[1]]],
            fmt="o",
            color="C0",
            capsize=4,
        )
    ax.set_xticks(range(len(slugs)), [result.shown(slug) for slug in slugs], rotation=20, ha="right")
    ax.set_xlim(-0.5, max(0.5, len(slugs) - 0.5))
    ax.set_ylim(0, 1)
    ax.set_ylabel("pass@1")
    ax.set_title(
        "pass@1 with 95% bootstrap CI; grey: pass-all@n .. pass-any@n\n"
        f"(convention: {result.convention.value})"
    )
    _tight_layout(fig)
    return _save(fig, out, "pass_at_1")


def _legend(ax: Axes, entries: int) -> None:
    if entries:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def _cost_plot(result: AnalysisResult, out: Path) -> list[Path]:
    points = cost_points(result.models, result.model_order)
    if not points:
        return []  # the analysis notes why (cost.NO_COST_NOTE): no empty plot
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, cost, acc in points:
        err = _yerr(acc, (result.models[name].get("ci") or {}).get("composite_accuracy"))
        ax.errorbar(
            [cost],
            [acc],
            yerr=None if err is None else [[err[0]], [err[1]]],
            fmt="o",
            color="C0",
            capsize=4,
        )
        ax.annotate(result.shown(name), (cost, acc), xytext=(5, 5), textcoords="offset points")
    frontier = pareto_frontier(points)
    chosen = sorted((p for p in points if p[0] in frontier), key=lambda p: p[1])
    ax.plot(
        [p[1] for p in chosen],
        [p[2] for p in chosen],
        "-s",
        color="C3",
        fillstyle="none",
        markersize=11,
        label="Pareto frontier",
    )
    ax.legend()
    ax.margins(x=0.25, y=0.1)  # room for the model names next to the points
    ax.set_xlabel(f"total cost (USD; source: {_sources(result, [p[0] for p in points])})")
    ax.set_ylabel("composite accuracy (95% bootstrap CI)")
    ax.set_title(f"Cost vs composite accuracy (convention: {result.convention.value})")
    _tight_layout(fig)
    return _save(fig, out, COST_PLOT)


def _sources(result: AnalysisResult, slugs: list[str]) -> str:
    found = sorted({str(result.models[s].get("cost_source") or "n/a") for s in slugs})
    return ", ".join(found)
