"""Table 6 of an audit (``table6.{md,csv,tex}``) and ``audit_summary.json``, in the paper's shape."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from oracleproto.leakaudit.score import AuditScore
from oracleproto.primitives.fileio import atomic_write_text

FORMATS = ("md", "csv", "json", "latex")
_FILES = {"md": "table6.md", "csv": "table6.csv", "latex": "table6.tex", "json": "audit_summary.json"}
_COLUMNS = ("TP", "TN", "FP", "FN", "Total")


def percent(value: float | None) -> str:
    """``0.0111`` → ``1.11%``; None → ``n/a``."""
    return "n/a" if value is None else f"{100 * value:.2f}%"


def interval(ci: list[float] | None) -> str:
    """``[low, high]`` as ``0.38%–3.22%``."""
    return "n/a" if ci is None else f"{percent(ci[0])}–{percent(ci[1])}"


def _counts(s: dict[str, Any]) -> list[int]:
    return [s["tp"], s["tn"], s["fp"], s["fn"], s["n"]]


def _proportions(s: dict[str, Any]) -> list[str]:
    n = s["n"]
    return [percent(v / n) if n else "n/a" for v in _counts(s)]


def rate_lines(s: dict[str, Any]) -> list[str]:
    """The derived rates under the table, one sentence each."""
    kappa = "n/a (one annotator)" if s["annotator_kappa"] is None else f"{s['annotator_kappa']:.3f}"
    if len(s["annotators"]) == 2 and s["annotator_kappa"] is None:
        kappa = "n/a (undefined on these labels)"
    leaks = s["tp"] + s["fn"]
    return [
        f"FN/N = {s['fn']}/{s['n']} = {percent(s['fn_rate'])} (Wilson 95% CI {interval(s['fn_rate_ci'])})",
        f"1 − recall = FN/(TP+FN) = {s['fn']}/{leaks} = {percent(s['pass_through'])} "
        f"(Wilson 95% CI {interval(s['pass_through_ci'])})",
        f"precision = TP/(TP+FP) = {percent(s['precision'])}",
        f"annotators: {', '.join(s['annotators'])}; adjudication: {s['adjudicate']}; Cohen κ = {kappa}; "
        f"disagreements: {len(s['disagreements'])}",
        f"left out: {s['unsure']} unsure, {s['unlabelled']} unlabelled, of {s['items']} audit items",
    ]


def table6_md(s: dict[str, Any]) -> str:
    """Markdown Table 6 plus the rates."""
    lines = [
        "| Category | " + " | ".join(_COLUMNS) + " |",
        "|---|" + "---:|" * len(_COLUMNS),
        "| Count | " + " | ".join(str(v) for v in _counts(s)) + " |",
        "| Proportion | " + " | ".join(_proportions(s)) + " |",
        "",
        *(f"- {line}" for line in rate_lines(s)),
    ]
    if s["disagreements"]:
        lines += ["", "Disagreements:", ""]
        lines += [
            f"- `{d['item_id']}`: " + ", ".join(f"{a} {v}" for a, v in d["labels"].items())
            for d in s["disagreements"]
        ]
    return "\n".join(lines) + "\n"


def table6_csv(s: dict[str, Any]) -> str:
    """CSV Table 6: a Count and a Proportion row."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["category", *_COLUMNS])
    writer.writerow(["Count", *_counts(s)])
    writer.writerow(["Proportion", *_proportions(s)])
    return out.getvalue()


def latex_percent(text: str) -> str:
    """A percentage for LaTeX (``1.11%`` → ``$1.11\\%$``)."""
    return text if text == "n/a" else f"${text[:-1]}\\%$"


def table6_tex(s: dict[str, Any]) -> str:
    """The paper's ``tab:leakage-audit-results`` with the rates in the caption."""
    ci = s["fn_rate_ci"]
    low, high = (latex_percent(percent(ci[0])), latex_percent(percent(ci[1]))) if ci else ("n/a", "n/a")
    caption = (
        "Manual audit confusion matrix. TP/TN: detector and human agree (leak/no-leak); FN: real leak "
        "missed by the detector, reaching the main LLM; FP: non-leak erroneously dropped. "
        f"$\\mathrm{{FN}}/N = {s['fn']}/{s['n']}$ (Wilson 95\\% CI {low}--{high}); "
        f"$1-\\text{{recall}} = {s['fn']}/{s['tp'] + s['fn']}$."
    )
    return "\n".join(
        [
            "\\begin{table}[htbp]",
            "\\centering",
            f"\\caption{{{caption}}}",
            "\\label{tab:leakage-audit-results}",
            "\\begin{tabular}{lccccc}",
            "\\toprule",
            "\\textbf{Category} & " + " & ".join(f"\\textbf{{{c}}}" for c in _COLUMNS) + " \\\\",
            "\\midrule",
            "Count & " + " & ".join(str(v) for v in _counts(s)) + " \\\\",
            "Proportion & " + " & ".join(latex_percent(p) for p in _proportions(s)) + " \\\\",
            "\\bottomrule",
            "\\end{tabular}",
            "\\end{table}",
            "",
        ]
    )


def summary_json(s: dict[str, Any]) -> str:
    """``audit_summary.json`` text."""
    return json.dumps(s, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


_RENDER = {"md": table6_md, "csv": table6_csv, "latex": table6_tex, "json": summary_json}


def write_outputs(audit_dir: Path, score: AuditScore, formats: Iterable[str]) -> list[Path]:
    """Write the chosen outputs (``audit_summary.json`` always) atomically; returns their paths."""
    summary = score.summary()
    wanted = set(formats) | {"json"}
    written = []
    for fmt in FORMATS:
        if fmt in wanted:
            path = audit_dir / _FILES[fmt]
            atomic_write_text(path, _RENDER[fmt](summary))
            written.append(path)
    return written
