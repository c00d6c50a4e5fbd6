"""Write an analysis directory atomically: build in a temporary sibling, then swap it in."""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from oracleproto.analysis.model_summary import FILE_NAME as MODEL_SUMMARY_CSV
from oracleproto.analysis.model_summary import render_model_summary
from oracleproto.analysis.pair_tables import NAME as PAIRS_TABLE
from oracleproto.analysis.pair_tables import PAIR_RENDERERS
from oracleproto.analysis.report import AnalysisResult
from oracleproto.analysis.revisions import summary_revision
from oracleproto.analysis.setup_tables import SETUP_TABLES, render_setup
from oracleproto.analysis.tables import DEFAULT_STYLE, RENDERERS, TABLES, TableStyle
from oracleproto.errors import AnalysisError
from oracleproto.primitives import killpoints
from oracleproto.store.rundir import ANALYSIS_MARKER, AUDIT_SUBDIR, ON_DEMAND_SUBDIRS

FORMATS = ("md", "csv", "json", "latex", "all")
#: Sub-folders of an analysis directory that other passes own (the refresh audit, the reports written
#: on demand beside it): a rewrite by the analysis pass carries them over unchanged, never deletes them.
FOREIGN_SUBDIRS = (AUDIT_SUBDIR, *ON_DEMAND_SUBDIRS)
FLOAT_DECIMALS = 6


class PendingPlots(Protocol):
    """Plots being drawn into an analysis's temporary folder."""

    def wait(self) -> None:
        """Return once every plot file is written (raise what drawing them raised)."""

    def cancel(self) -> None:
        """Stop drawing: no plot file is written after this returns."""


#: Starts drawing ``result``'s plots into a folder and returns at once (a replay hands them to an
#: idle worker process, ``runner/replay_plots.py``); :func:`draw_here` draws them before returning.
PlotDrawer = Callable[[AnalysisResult, Path], PendingPlots]


class _Drawn:
    """Plots already written (nothing to wait for or cancel)."""

    def wait(self) -> None:
        """Nothing pending."""

    def cancel(self) -> None:
        """Nothing pending."""


def draw_here(result: AnalysisResult, out: Path) -> PendingPlots:
    """Draw the plots in this process, now."""
    from oracleproto.analysis.plots import write_plots  # matplotlib only when plots are drawn

    write_plots(result, out)
    return _Drawn()


def normalise(value: Any) -> Any:
    """JSON-ready copy: floats rounded to fixed decimals, NaN/inf → None, tuples → lists."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        rounded = round(value, FLOAT_DECIMALS)
        return 0.0 if rounded == 0 else rounded
    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalise(v) for v in value]
    return value


def summary_json(result: AnalysisResult) -> str:
    """``summary.json`` text: sorted keys, indent 2, fixed float rounding, the analysis revision."""
    revision = summary_revision(result.convention) if result.revision is None else result.revision
    document = {**normalise(result.summary()), "analysis_revision": revision}
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def write_analysis(
    result: AnalysisResult,
    out: Path,
    formats: str = "all",
    plots: bool = True,
    style: TableStyle = DEFAULT_STYLE,
    *,
    draw_plots: PlotDrawer = draw_here,
) -> list[Path]:
    """Write tables/summary/plots into ``out`` atomically; returns the written file names.

    ``style`` changes only how Tables 3–5 print (``report --decimals/--ci/--bold``); the run's
    own analysis pass and ``verify`` use the default, so a styled report belongs in ``--out``.
    ``draw_plots`` is started before the tables are written, and waited for after them.
    """
    if formats not in FORMATS:
        raise AnalysisError(f"unknown format {formats!r}: expected one of {', '.join(FORMATS)}")
    out = Path(out)
    if out.exists() and (
        not out.is_dir() or (_has_own_content(out) and not (out / ANALYSIS_MARKER).exists())
    ):
        raise AnalysisError(
            f"output {out} exists and is not an oracleproto analysis directory: choose an empty or new --out"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(out)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    pending: PendingPlots = _Drawn()
    try:
        if plots and formats == "all":
            pending = draw_plots(result, tmp)
        (tmp / ANALYSIS_MARKER).write_text(f"convention={result.convention.value}\n", encoding="utf-8")
        chosen = list(RENDERERS) if formats == "all" else [f for f in (formats,) if f in RENDERERS]
        if formats in ("json", "all"):
            (tmp / "summary.json").write_text(summary_json(result), encoding="utf-8")
        for fmt in chosen:
            suffix, render = RENDERERS[fmt]
            for name in TABLES:
                (tmp / f"{name}{suffix}").write_text(render(result, name, style), encoding="utf-8")
            for name in SETUP_TABLES:
                (tmp / f"{name}{suffix}").write_text(render_setup(result, name, fmt), encoding="utf-8")
            if result.comparisons is not None:  # analysis revision 5 on: the pairs' tests
                pairs_suffix, render_pairs = PAIR_RENDERERS[fmt]
                (tmp / f"{PAIRS_TABLE}{pairs_suffix}").write_text(render_pairs(result), encoding="utf-8")
        if formats in ("csv", "all"):
            (tmp / MODEL_SUMMARY_CSV).write_text(render_model_summary(result), encoding="utf-8")
        pending.wait()
        written = sorted(p.relative_to(tmp) for p in tmp.iterdir())
        for name in FOREIGN_SUBDIRS:
            if (out / name).is_dir():
                shutil.copytree(out / name, tmp / name)
        killpoints.reached("analysis")
        swap_directory(tmp, out)
    except BaseException as exc:
        pending.cancel()  # before the folder goes: nothing may write into it afterwards
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(out)  # a failed write() names no file: name the output folder
        raise
    return [out / p for p in written]


def _has_own_content(out: Path) -> bool:
    """True when ``out`` holds anything besides the sub-folders other passes own."""
    return any(p.name not in FOREIGN_SUBDIRS or not p.is_dir() for p in out.iterdir())


def remove_leftovers(out: Path) -> None:
    """Delete the temp and moved-aside copies of ``out`` a killed writer left beside it.

    A writer killed before its swap leaves ``.<out>.tmp-*``; killed between its two renames, it
    leaves ``.<out>.old-*`` (and no ``out``). Neither is ever read; the next write of ``out``
    (the resume's analysis pass) clears them so they are not published with the run.
    """
    for pattern in (f".{out.name}.tmp-*", f".{out.name}.old-*"):
        for stale in out.parent.glob(pattern):
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)


def swap_directory(tmp: Path, out: Path) -> None:
    """Put the fully written ``tmp`` in place of ``out`` by renames, then delete the old ``out``."""
    backup = None
    if out.exists():
        backup = out.parent / f".{out.name}.old-{os.getpid()}"
        out.rename(backup)
        killpoints.reached("analysis-swap")
    tmp.rename(out)
    if backup is not None:
        shutil.rmtree(backup)
