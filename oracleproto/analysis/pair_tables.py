"""``table_pairs``: every pair's composite-accuracy difference, its interval and its tests.

The paper's Tables 3–5 have one row per model; the pairwise tests of issue 29 §2 have one row per
pair, so they get a table of their own beside them (Markdown, CSV, LaTeX like the others): the
difference a − b and its paired-bootstrap 95% interval (``paired_differences``), the two-sided
p-value and its Holm and Benjamini–Hochberg adjustments (``comparisons``). An adjusted p-value at
or below the level is bold. Written only by analysis revisions that compute the comparisons.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

from oracleproto.analysis.multiple import Q_LEVEL
from oracleproto.analysis.report import AnalysisResult
from oracleproto.analysis.tables import latex_escape

NAME = "table_pairs"
TITLE = "Pairwise comparisons of composite accuracy"
#: Decimals of the difference and its interval (as composite accuracy in Table 3) and of p-values.
DECIMALS = 4


def _fmt(value: float | None) -> str | None:
    if value is None:
        return None
    text = f"{value:.{DECIMALS}f}"
    return "0." + "0" * DECIMALS if text.startswith("-0.") and float(text) == 0 else text


def _rows(result: AnalysisResult) -> list[dict[str, Any]]:
    """One row per tested pair, in the comparisons' order (plan order, a before b)."""
    assert result.comparisons is not None
    metric = result.comparisons["metric"]
    intervals = {(p["a"], p["b"]): p for p in result.paired_differences if p["metric"] == metric}
    rows = []
    for pair in result.comparisons["pairs"]:
        paired = intervals.get((pair["a"], pair["b"]), {})
        ci = paired.get("ci")
        rows.append(
            {
                "a": result.shown(pair["a"]),
                "b": result.shown(pair["b"]),
                "difference": _fmt(paired.get("difference")),
                "ci": None if ci is None else (_fmt(ci[0]), _fmt(ci[1])),
                "p_value": _fmt(pair["p_value"]),
                "p_holm": _fmt(pair["p_holm"]),
                "p_bh": _fmt(pair["p_bh"]),
                "significant_holm": pair["significant_holm"],
                "significant_bh": pair["significant_bh"],
            }
        )
    return rows


def _notes(result: AnalysisResult) -> list[str]:
    assert result.comparisons is not None
    level = f"{float(Q_LEVEL):g}"
    boot = result.bootstrap
    notes = [
        f"Δ = model A − model B; interval: 95% paired percentile bootstrap "
        f"(B = {boot.get('samples')}, seed {boot.get('seed')}, questions resampled within buckets). "
        f"p: two-sided paired-bootstrap p-value; Holm and Benjamini–Hochberg adjust over all pairs; "
        f"bold: adjusted p ≤ {level}."
    ]
    sensitivity = result.comparisons.get("multiple_comparisons")
    notes.append(sensitivity["line"] + "." if sensitivity else "No pair could be tested (no bootstrap).")
    return notes


def _bold(value: str | None, significant: bool | None, wrap: Callable[[str], str]) -> str | None:
    return None if value is None else (wrap(value) if significant else value)


def _header(result: AnalysisResult) -> str:
    profile = result.harness_profile
    shown = "" if profile is None else f" · harness profile: `{profile['name']}` ({profile['fingerprint']})"
    return f"Convention: `{result.convention.value}` · answer parser: `{result.answer_parser}`{shown}"


def render_pairs_markdown(result: AnalysisResult) -> str:
    """The pairs as GitHub Markdown (em dash for a missing value)."""
    lines = [f"### {TITLE}", "", _header(result), ""]
    lines.append("| Model A | Model B | Δ Composite | 95% CI | p | p (Holm) | p (BH) |")
    lines.append("|---|---|---:|---|---:|---:|---:|")

    def strong(text: str) -> str:
        return f"**{text}**"

    for row in _rows(result):
        cells = [
            row["a"].replace("|", "&#124;"),
            row["b"].replace("|", "&#124;"),
            row["difference"],
            None if row["ci"] is None else f"[{row['ci'][0]}, {row['ci'][1]}]",
            row["p_value"],
            _bold(row["p_holm"], row["significant_holm"], strong),
            _bold(row["p_bh"], row["significant_bh"], strong),
        ]
        lines.append("| " + " | ".join("—" if c is None else c for c in cells) + " |")
    return "\n".join([*lines, "", *_notes(result)]) + "\n"


CSV_COLUMNS = (
    "model_a",
    "model_b",
    "delta_composite",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "p_bh",
    "significant_holm",
    "significant_bh",
    "convention",
    "answer_parser",
)


def _flag(value: bool | None) -> str:
    return "" if value is None else ("true" if value else "false")


def render_pairs_csv(result: AnalysisResult) -> str:
    """The pairs as CSV: numbers at 4 decimals, empty when undefined, ``true``/``false`` flags."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in _rows(result):
        low, high = row["ci"] if row["ci"] is not None else (None, None)
        values = [row["difference"], low, high, row["p_value"], row["p_holm"], row["p_bh"]]
        writer.writerow(
            [
                row["a"],
                row["b"],
                *("" if v is None else v for v in values),
                _flag(row["significant_holm"]),
                _flag(row["significant_bh"]),
                result.convention.value,
                result.answer_parser,
            ]
        )
    return buffer.getvalue()


def render_pairs_latex(result: AnalysisResult) -> str:
    """The pairs as a booktabs LaTeX table (the notes join the caption)."""

    def strong(text: str) -> str:
        return rf"\textbf{{{text}}}"

    # The notes' minus and ≤ are not in LaTeX's default UTF-8 set; the en dash is.
    caption = " ".join(latex_escape(n).replace("−", "-").replace("≤", r"$\le$") for n in _notes(result))
    lines = [
        f"% oracleproto analysis, convention: {result.convention.value}, "
        f"answer parser: {result.answer_parser}",
        r"\begin{table}[htbp]",
        r"\centering",
        rf"\caption{{{TITLE} (convention: \texttt{{{latex_escape(result.convention.value)}}}). {caption}}}",
        rf"\label{{tab:{NAME}}}",
        r"\begin{tabular}{llccccc}",
        r"\toprule",
        r"\textbf{Model A} & \textbf{Model B} & \textbf{$\Delta$ Composite} & \textbf{95\% CI} & "
        r"\textbf{$p$} & \textbf{$p$ (Holm)} & \textbf{$p$ (BH)} \\",
        r"\midrule",
    ]
    for row in _rows(result):
        cells = [
            latex_escape(row["a"]),
            latex_escape(row["b"]),
            row["difference"],
            None if row["ci"] is None else f"[{row['ci'][0]}, {row['ci'][1]}]",
            row["p_value"],
            _bold(row["p_holm"], row["significant_holm"], strong),
            _bold(row["p_bh"], row["significant_bh"], strong),
        ]
        lines.append(" & ".join("--" if c is None else c for c in cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


#: Table format (``md``, ``csv``, ``latex``) → file suffix and renderer, as ``tables.RENDERERS``.
PAIR_RENDERERS: dict[str, tuple[str, Callable[[AnalysisResult], str]]] = {
    "md": (".md", render_pairs_markdown),
    "csv": (".csv", render_pairs_csv),
    "latex": (".tex", render_pairs_latex),
}
