"""The paper's Tables 3, 4 and 5 in its shape, as Markdown, CSV and LaTeX (booktabs).

Best values are bold like the paper (ties all bold); missing values print as an em dash
(empty in CSV). Fixed decimals keep outputs byte-identical across runs. A ``TableStyle`` gives
the paper-ready variants: other decimals, bootstrap CIs next to the values, and bold only where
the paired bootstrap says the best is significantly better than the runner-up.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from oracleproto.analysis.report import AnalysisResult
from oracleproto.analysis.revisions import CSV_DECIMALS, four_decimal_csv


@dataclass(frozen=True)
class Column:
    """One table column: header, how to fetch it, decimals, and which way is best."""

    header: str
    latex: str
    get: Callable[[dict[str, Any]], float | str | None]
    decimals: int
    best: str  # "max" | "min" | "none" (a text column, e.g. the cost source: never bold)
    #: The ``summary.json`` key whose bootstrap CI (``ci``) and paired differences exist, if any.
    stat: str | None = None


BOLD_RULES = ("best", "significant", "none")


@dataclass(frozen=True)
class TableStyle:
    """How the main tables print: decimals, CIs next to values, which best values are bold.

    The default reproduces the paper's tables (and every run's published ``analysis/``) byte
    for byte; ``report --decimals/--ci/--bold`` choose the paper-ready variants.
    """

    decimals: int | None = None  # None: each column's own (4 for scores, 2–3 for costs)
    ci: bool = False
    bold: str = "best"  # best (the paper: every best value) | significant | none


DEFAULT_STYLE = TableStyle()


@dataclass(frozen=True)
class Cell:
    """One formatted table cell: its value, its CI bounds (when shown) and whether it is bold."""

    value: str | None
    ci: tuple[str, str] | None = None
    bold: bool = False


def _key(name: str) -> Callable[[dict[str, Any]], float | str | None]:
    return lambda e: e.get(name)


def _bucket(name: str) -> Callable[[dict[str, Any]], float | None]:
    return lambda e: e["exam_avg"].get(name)


TABLES: dict[str, tuple[str, tuple[Column, ...]]] = {
    "table3_overall": (
        "Overall performance and cost",
        (
            Column(
                "Composite Accuracy",
                r"\textbf{Composite Accuracy}",
                _key("composite_accuracy"),
                4,
                "max",
                "composite_accuracy",
            ),
            Column("Total Cost (USD)", r"\textbf{Total Cost (USD)}", _key("total_cost_usd"), 2, "min"),
            Column(
                "Per-Correct Cost (USD)",
                r"\textbf{Per-Correct Cost (USD)}",
                _key("per_correct_cost_usd"),
                3,
                "min",
            ),
            # Where the total comes from: provider | price table | mixed | n/a (docs/design/metrics.md, Cost).
            Column("Cost Source", r"\textbf{Cost Source}", _key("cost_source"), 0, "none"),
            Column(
                "Total Cost with Tools (USD)",
                r"\textbf{Total Cost with Tools (USD)}",
                _key("total_cost_with_tools_usd"),
                2,
                "min",
            ),
            Column(
                "Per-Correct Cost with Tools (USD)",
                r"\textbf{Per-Correct Cost with Tools (USD)}",
                _key("per_correct_cost_with_tools_usd"),
                3,
                "min",
            ),
        ),
    ),
    "table4_buckets": (
        "Per-bucket exam mean",
        (
            Column("Yes/No", r"\textbf{Yes/No}", _bucket("yes_no"), 4, "max"),
            Column("Binary", r"\textbf{Binary}", _bucket("binary"), 4, "max"),
            Column("MC Single", r"\textbf{MC Single}", _bucket("mc_single"), 4, "max"),
            Column("MC Multi", r"\textbf{MC Multi}", _bucket("mc_multi"), 4, "max"),
        ),
    ),
    "table5_consistency": (
        "Per-question accuracy, consistency, and skill score",
        (
            Column(
                "pass@1", r"$\boldsymbol{\text{pass@1}}$", _key("pass_at_1_avg"), 4, "max", "pass_at_1_avg"
            ),
            Column("pass-any@n", r"$\boldsymbol{\text{pass-any@n}}$", _key("pass_any_at_n"), 4, "max"),
            Column("pass-all@n", r"$\boldsymbol{\text{pass-all@n}}$", _key("pass_all_at_n"), 4, "max"),
            Column("Cohen's kappa", r"\textbf{Cohen's $\boldsymbol{\kappa}$}", _key("cohen_kappa"), 4, "max"),
            Column(
                "Fleiss' kappa", r"\textbf{Fleiss' $\boldsymbol{\kappa}$}", _key("fleiss_kappa"), 4, "max"
            ),
            Column("FSS", r"$\boldsymbol{\text{fss}}$", _key("fss"), 4, "max"),
        ),
    ),
}


def _fmt(value: float | str | None, decimals: int) -> str | None:
    if value is None or isinstance(value, str):
        return value
    text = f"{value:.{decimals}f}"
    return "0." + "0" * decimals if text.startswith("-0.") and float(text) == 0 else text


def _decimals(col: Column, style: TableStyle) -> int:
    return col.decimals if style.decimals is None or col.best == "none" else style.decimals


def _cells(
    result: AnalysisResult, columns: tuple[Column, ...], style: TableStyle = DEFAULT_STYLE
) -> list[list[Cell]]:
    """Per model, per column: the formatted cell (value, CI when shown, bold per the style's rule)."""
    entries = [result.models[s] for s in result.model_order]
    grid: list[list[Cell]] = [[] for _ in entries]
    for col in columns:
        places = _decimals(col, style)
        values = [_fmt(col.get(e), places) for e in entries]
        bold = _bold_rows(result, col, values, style.bold)
        for row, (entry, value) in enumerate(zip(entries, values, strict=True)):
            bounds = (entry.get("ci") or {}).get(col.stat) if style.ci and col.stat else None
            ci = None if bounds is None else (str(_fmt(bounds[0], places)), str(_fmt(bounds[1], places)))
            grid[row].append(Cell(value, ci, row in bold))
    return grid


def _ranked(col: Column, values: list[str | None]) -> list[int]:
    """Rows with a value, best first (ties keep plan order)."""
    rows = [i for i, v in enumerate(values) if v is not None]
    return sorted(rows, key=lambda i: -float(str(values[i])) if col.best == "max" else float(str(values[i])))


def _bold_rows(result: AnalysisResult, col: Column, values: list[str | None], rule: str) -> set[int]:
    """Rows whose cell is bold: every best value (``best``, the paper's rule, ties all bold), the best
    only when significantly better than the runner-up (``significant``), or none."""
    if rule == "none" or col.best == "none":
        return set()
    ranked = _ranked(col, values)
    if len(ranked) < 2:
        return set()
    if rule == "best":
        return {i for i in ranked if values[i] == values[ranked[0]]}
    best, runner = ranked[0], ranked[1]
    if col.stat is None or values[best] == values[runner]:
        return set()  # no paired test for this column, or a tie: nothing is significantly best
    return {best} if _significantly_better(result, col, best, runner) else set()


def _significantly_better(result: AnalysisResult, col: Column, best: int, runner: int) -> bool:
    """True when the paired bootstrap 95% CI of ``best − runner`` excludes 0 in best's favour."""
    a, b = result.model_order[best], result.model_order[runner]
    for pair in result.paired_differences:
        if pair["metric"] != col.stat or {pair["a"], pair["b"]} != {a, b} or pair["ci"] is None:
            continue
        lo, hi = pair["ci"]
        # The pair's difference is a − b of the plan's order; flip it when best is its b.
        if pair["a"] != a:
            lo, hi = -hi, -lo
        return bool(lo > 0) if col.best == "max" else bool(hi < 0)
    return False


def _footnotes(result: AnalysisResult, columns: tuple[Column, ...], style: TableStyle) -> list[str]:
    """What the non-default annotations mean (none for the default style: the paper's bytes), and
    under the main table the calls that were retried or failed (``call_failures.py``)."""
    notes: list[str] = list(result.failure_notes) if columns is TABLES["table3_overall"][1] else []
    if style.ci and any(c.stat for c in columns):
        notes.append(
            "Brackets: 95% percentile bootstrap interval "
            f"(B = {result.bootstrap.get('samples')}, questions resampled within buckets)."
        )
    tested = [c.header for c in columns if c.stat]
    if style.bold == "significant" and tested:
        notes.append(
            "Bold: the best value, only where the paired bootstrap 95% interval of its difference to "
            f"the runner-up excludes 0 ({', '.join(tested)}; the other columns have no paired test)."
        )
    elif style.bold == "significant":
        notes.append("No value is bold: these columns have no paired bootstrap test.")
    return notes


def _md_cell(cell: Cell) -> str:
    if cell.value is None:
        return "—"
    text = f"**{cell.value}**" if cell.bold else cell.value
    return text if cell.ci is None else f"{text} [{cell.ci[0]}, {cell.ci[1]}]"


def _md_profile(result: AnalysisResult) -> str:
    """`` · harness profile: `name` (fingerprint)`` when the run names its profile."""
    found = result.harness_profile
    return "" if found is None else f" · harness profile: `{found['name']}` ({found['fingerprint']})"


def _comment_profile(result: AnalysisResult) -> str:
    found = result.harness_profile
    return "" if found is None else f", harness profile: {found['name']} ({found['fingerprint']})"


def _latex_profile(result: AnalysisResult) -> str:
    found = result.harness_profile
    if found is None:
        return ""
    return (
        rf"; harness profile: \texttt{{{latex_escape(found['name'])}}} ({latex_escape(found['fingerprint'])})"
    )


def render_markdown(result: AnalysisResult, name: str, style: TableStyle = DEFAULT_STYLE) -> str:
    """One table as GitHub Markdown, best values bold, convention and answer parser stated."""
    title, columns = TABLES[name]
    lines = [
        f"### {title}",
        "",
        f"Convention: `{result.convention.value}` · answer parser: `{result.answer_parser}`"
        + _md_profile(result),
        "",
    ]
    lines.append("| Model | " + " | ".join(c.header for c in columns) + " |")
    lines.append("|---|" + "---:|" * len(columns))
    for slug, cells in zip(result.model_order, _cells(result, columns, style), strict=True):
        shown = [_md_cell(cell) for cell in cells]
        lines.append(f"| {result.shown(slug).replace('|', '&#124;')} | " + " | ".join(shown) + " |")
    notes = _footnotes(result, columns, style)
    if notes:
        lines += ["", *notes]
    return "\n".join(lines) + "\n"


def render_csv(result: AnalysisResult, name: str, style: TableStyle = DEFAULT_STYLE) -> str:
    """One table as CSV with ``convention`` and ``answer_parser`` columns; empty cells for missing values.

    With ``style.ci`` a column with a bootstrap CI is followed by ``<header> CI low`` and
    ``<header> CI high`` columns (numbers stay numbers for spreadsheets).
    """
    _, columns = TABLES[name]
    if style.decimals is None and four_decimal_csv(result.convention, result.revision):
        style = replace(style, decimals=CSV_DECIMALS)
    with_ci = [style.ci and c.stat is not None for c in columns]
    header: list[str] = []
    for col, ci in zip(columns, with_ci, strict=True):
        header += [col.header, f"{col.header} CI low", f"{col.header} CI high"] if ci else [col.header]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["model", *header, "convention", "answer_parser"])
    for slug, cells in zip(result.model_order, _cells(result, columns, style), strict=True):
        values: list[str] = []
        for cell, ci in zip(cells, with_ci, strict=True):
            values.append(cell.value if cell.value is not None else "")
            if ci:
                values += list(cell.ci) if cell.ci is not None else ["", ""]
        parser = result.models[slug].get("answer_parser", result.answer_parser)
        writer.writerow([result.shown(slug), *values, result.convention.value, parser])
    return buffer.getvalue()


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX special characters in a model name."""
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def _latex_cell(cell: Cell) -> str:
    if cell.value is None:
        return "--"
    text = rf"\textbf{{{cell.value}}}" if cell.bold else cell.value
    return text if cell.ci is None else f"{text} [{cell.ci[0]}, {cell.ci[1]}]"


def render_latex(result: AnalysisResult, name: str, style: TableStyle = DEFAULT_STYLE) -> str:
    """One table as a booktabs LaTeX table in the paper's shape (footnotes join the caption)."""
    title, columns = TABLES[name]
    extra = "".join(" " + latex_escape(note) for note in _footnotes(result, columns, style))
    lines = [
        f"% oracleproto analysis, convention: {result.convention.value}, "
        f"answer parser: {result.answer_parser}{_comment_profile(result)}",
        r"\begin{table}[htbp]",
        r"\centering",
        rf"\caption{{{title} (convention: \texttt{{{latex_escape(result.convention.value)}}}; "
        rf"answer parser: \texttt{{{latex_escape(result.answer_parser)}}}{_latex_profile(result)}).{extra}}}",
        rf"\label{{tab:{name}}}",
        r"\begin{tabular}{l" + "c" * len(columns) + "}",
        r"\toprule",
        r"\textbf{Model} & " + " & ".join(c.latex for c in columns) + r" \\",
        r"\midrule",
    ]
    for slug, cells in zip(result.model_order, _cells(result, columns, style), strict=True):
        shown = [_latex_cell(cell) for cell in cells]
        lines.append(latex_escape(result.shown(slug)) + " & " + " & ".join(shown) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


RENDERERS: dict[str, tuple[str, Callable[[AnalysisResult, str, TableStyle], str]]] = {
    "md": (".md", render_markdown),
    "csv": (".csv", render_csv),
    "latex": (".tex", render_latex),
}
