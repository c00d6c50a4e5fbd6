"""The overview: the run's manifest facts, Tables 3–5 (with what each cell links to), the plots.

Tables come from the analysis recomputed from ``db/`` under the run's recorded analysis settings
(what ``verify`` regenerates and compares with the published ``analysis/``), formatted by the same
column definitions as the published tables. Plots are the published PNGs when the run has them.
"""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path
from typing import Any

from oracleproto.analysis.postrun import analyze_with_settings
from oracleproto.analysis.report import AnalysisResult
from oracleproto.analysis.tables import TABLES, Column
from oracleproto.errors import OracleprotoError
from oracleproto.runner.reconstruct import settings_from_snapshot
from oracleproto.settings.model import AnalysisSettings
from oracleproto.verify.earlier import analysis_settings as earlier_analysis_settings

PLOTS = (
    ("cost_vs_composite", "Cost vs composite accuracy"),
    ("buckets", "Per-bucket exam mean"),
    ("pass_at_1", "pass@1 with pass-all / pass-any"),
)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
#: Table 4's columns, in order: the bucket each one filters the questions by.
TABLE4_BUCKETS = ("yes_no", "binary", "mc_single", "mc_multi")


def run_analysis_settings(snapshot: dict[str, Any], where: Path, *, earlier: bool) -> AnalysisSettings:
    """The analysis settings the run recorded (``reference-v4`` for the earlier implementation's)."""
    if earlier or not isinstance(snapshot.get("analysis"), dict):
        return earlier_analysis_settings()
    return settings_from_snapshot(snapshot, where=where).analysis


def analysis_result(run_root: Path, settings: AnalysisSettings) -> AnalysisResult:
    """Every metric of the run under its settings (pure: writes nothing)."""
    return analyze_with_settings(run_root, settings)


def _fmt(value: float | str | None, decimals: int) -> str | None:
    if value is None or isinstance(value, str):
        return value
    text = f"{value:.{decimals}f}"
    return "0." + "0" * decimals if text.startswith("-0.") and float(text) == 0 else text


def _column(result: AnalysisResult, col: Column) -> list[tuple[str | None, bool]]:
    """One column's shown values, best ones (ties all) marked, as the paper's tables bold them."""
    values = [_fmt(col.get(result.models[s]), col.decimals) for s in result.model_order]
    numbers = [float(v) for v in values if v is not None] if col.best in ("max", "min") else []
    best = (max if col.best == "max" else min)(numbers) if len(numbers) > 1 else None
    return [(v, best is not None and v is not None and float(v) == best) for v in values]


def tables_doc(result: AnalysisResult) -> list[dict[str, Any]]:
    """Tables 3–5: per model row, per column the shown value, bold flag and the bucket it filters by."""
    out: list[dict[str, Any]] = []
    for name, (title, columns) in TABLES.items():
        shown = [_column(result, col) for col in columns]
        rows = []
        for ri, slug in enumerate(result.model_order):
            cells = []
            for ci in range(len(columns)):
                value, best = shown[ci][ri]
                bucket = TABLE4_BUCKETS[ci] if name == "table4_buckets" and ci < len(TABLE4_BUCKETS) else None
                cells.append({"text": value, "best": best, "bucket": bucket})
            rows.append({"model": slug, "name": result.shown(slug), "cells": cells})
        out.append({"name": name, "title": title, "columns": [c.header for c in columns], "rows": rows})
    return out


def plots_doc(analysis_dir: Path, result: AnalysisResult | None) -> list[dict[str, str]]:
    """The plots as PNG data: URIs (published ones, else drawn now from ``result``)."""
    found = {
        stem: analysis_dir / f"{stem}.png" for stem, _ in PLOTS if (analysis_dir / f"{stem}.png").is_file()
    }
    if not found and result is not None:
        from oracleproto.analysis.plots import write_plots  # matplotlib only when a run lacks its plots

        with tempfile.TemporaryDirectory(prefix="oracleproto-view-") as tmp:
            write_plots(result, Path(tmp))
            return _plot_uris({stem: Path(tmp) / f"{stem}.png" for stem, _ in PLOTS})
    return _plot_uris(found)


def _plot_uris(paths: dict[str, Path]) -> list[dict[str, str]]:
    out = []
    for stem, title in PLOTS:
        path = paths.get(stem)
        if path is None or not path.is_file():
            continue
        data = path.read_bytes()
        if not data.startswith(PNG_MAGIC):  # only images go into an <img>; anything else is skipped
            continue
        out.append(
            {"name": stem, "title": title, "uri": "data:image/png;base64," + base64.b64encode(data).decode()}
        )
    return out


def _get(snapshot: dict[str, Any], section: str, key: str, flat: str) -> Any:
    part = snapshot.get(section)
    if isinstance(part, dict) and key in part:
        return part[key]
    return snapshot.get(flat)


def _section(manifest: dict[str, Any], key: str) -> dict[str, Any]:
    value = manifest.get(key)
    return value if isinstance(value, dict) else {}


def facts(
    manifest: dict[str, Any], snapshot: dict[str, Any], result: AnalysisResult | None
) -> dict[str, Any]:
    """The manifest facts the overview lists (no key material: the snapshot's key fields are left out)."""
    grid, cassettes, hashes, filters = (
        _section(manifest, k) for k in ("grid", "cassettes", "hashes", "filters")
    )
    return {
        "run_id": manifest.get("run_id"),
        "models": manifest.get("models"),
        "training_cutoffs": manifest.get("model_training_cutoffs"),
        "n": manifest.get("sampling_n"),
        "T": _get(snapshot, "react", "max_steps", "REACT_MAX_STEPS"),
        "C": grid.get("c_list"),
        "R": grid.get("r_list"),
        "delta_days": _get(snapshot, "run", "delta_days", "DELTA_DAYS"),
        "convention": None if result is None else result.convention.value,
        "answer_parser": None if result is None else result.answer_parser,
        "detector": {
            "enabled": snapshot.get("leak_detector_enabled"),
            "model": snapshot.get("leak_detector_model"),
            "prompt_hash": snapshot.get("leak_detector_prompt_hash"),
        },
        "hashes": {
            **{k: hashes.get(k) for k in ("source_db", "metadata", "prompt_templates")},
            "reflection_protocol": manifest.get("reflection_protocol_hash"),
            "belief_protocol": manifest.get("belief_protocol_hash"),
        },
        "cassette_root_digest": cassettes.get("root_digest"),
        "sample_entries_root": manifest.get("sample_entries_root"),
        "started_at": manifest.get("started_at"),
        "finished_at": manifest.get("finished_at"),
        "oracleproto_version": manifest.get("oracleproto_version"),
        "harness_revision": manifest.get("harness_revision"),
        "question_count": filters.get("question_count"),
    }


def safe_result(run_root: Path, settings: AnalysisSettings) -> tuple[AnalysisResult | None, str | None]:
    """The analysis, or None and why (a run whose analysis fails still shows its samples)."""
    try:
        return analysis_result(run_root, settings), None
    except OracleprotoError as exc:
        return None, str(exc)
