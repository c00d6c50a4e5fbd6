"""Write the points-f1 files into a directory atomically (built beside it, swapped in by rename).

Without ``--out`` the files go to ``RUN/analysis/points-f1/``: beside the run's own analysis,
which stays as the run sealed it (the points-f1 folder is a sub-folder the analysis pass,
``verify`` and ``replay`` leave alone, like the refresh audit's).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from oracleproto.analysis.cost import PriceTable
from oracleproto.analysis.leakage import (
    BOUNDS_FILE,
    LEAKAGE_FILE,
    AuditBound,
    Leakage,
    bounds_csv,
    check_audit_run,
    leakage_json,
)
from oracleproto.analysis.points_f1.compute import PointsF1Result, analyze_points_f1
from oracleproto.analysis.points_f1.contract import ITERATIONS, NAME, SEED
from oracleproto.analysis.points_f1.leakage import points_f1_leakage, points_f1_rows
from oracleproto.analysis.points_f1.markdown import points_f1_markdown
from oracleproto.analysis.points_f1.render import (
    score_by_type_csv,
    score_pairs_csv,
    score_ranks_csv,
    score_summary_csv,
    selection_csv,
    summary_json,
)
from oracleproto.analysis.reader import read_run
from oracleproto.analysis.writer import remove_leftovers, swap_directory
from oracleproto.errors import AnalysisError

#: The folder under ``RUN/analysis`` that holds the points-f1 files when no ``--out`` is given.
SUBDIR = "points-f1"
MARKER = ".oracleproto-points-f1"
FILES: dict[str, Callable[[PointsF1Result], str]] = {
    "score_summary.csv": score_summary_csv,
    "score_by_type.csv": score_by_type_csv,
    "score_pairs.csv": score_pairs_csv,
    "score_ranks.csv": score_ranks_csv,
    "selection_diagnostics.csv": selection_csv,
    "score_summary.md": points_f1_markdown,
    "summary.json": summary_json,
}


def write_points_f1(result: PointsF1Result, out: Path, extra: Mapping[str, str] | None = None) -> list[Path]:
    """Write every points-f1 file into ``out`` (replacing an earlier points-f1 output only).

    ``extra``: more files (name → text) written with them, e.g. the leakage bound's.
    """
    files = {name: render(result) for name, render in FILES.items()} | dict(extra or {})
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).exists())):
        raise AnalysisError(
            f"output {out} exists and is not a points-f1 output directory: choose an empty or new --out"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(out)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        (tmp / MARKER).write_text("convention=points-f1\n", encoding="utf-8")
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        swap_directory(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return [out / name for name in sorted(files)]


def report_points_f1(
    run_dir: Path,
    out: Path | None,
    *,
    prices: PriceTable | None = None,
    display_names: Mapping[str, str] | None = None,
    iterations: int = ITERATIONS,
    seed: int = SEED,
    audit: AuditBound | None = None,
) -> tuple[PointsF1Result, Path, list[Path], Leakage | None]:
    """``oracleproto report RUN --convention points-f1``: compute, write, return what was written.

    With ``audit`` (the run's scored leakage audit), the leakage bound of every model is written
    too (``leakage_bounds.csv``, ``leakage.json``) and returned.
    """
    run = read_run(Path(run_dir))
    result = analyze_points_f1(
        run, prices=prices, display_names=display_names, iterations=iterations, seed=seed
    )
    leak = None
    extra: dict[str, str] = {}
    if audit is not None:
        check_audit_run(audit, run.run_id)
        leak = points_f1_leakage(result, dict.fromkeys(result.model_order, audit))
        rows = points_f1_rows(result, leak)
        extra = {
            BOUNDS_FILE: bounds_csv(rows, result.shown),
            LEAKAGE_FILE: leakage_json([result.run_id], NAME, leak, rows),
        }
    target = out if out is not None else Path(run_dir) / "analysis" / SUBDIR
    return result, target, write_points_f1(result, target, extra), leak
