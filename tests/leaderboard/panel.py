"""Synthetic runs for leaderboard tests: a panel of runs of one experiment, or of two.

Built with ``tests/analysis/builder.py`` (fictional questions), plus the two manifest keys the
viewer needs, so a board of them links to real viewer pages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.analysis.builder import QUESTIONS, RunSpec, T, ok, write_run

RUN_A = "20260102-030405-aaaa"
RUN_B = "20260102-030405-bbbb"
ONE, TWO, THREE = "vendor-a/one::r5::c4", "vendor-b/two::r5::c4", "vendor-c/three::r5::c4"
#: Every question right in every sample (score 100).
RIGHT: dict[str, list[T]] = {q.id: [ok(q.answer.replace(" ", ""))] * 3 for q in QUESTIONS}
#: "A" everywhere: right on q1, q5 (one yes/no point, two MC-single points).
ALWAYS_A: dict[str, list[T]] = {q.id: [ok("A")] * 3 for q in QUESTIONS}


def write_panel_run(
    root: Path,
    run_id: str,
    models: dict[str, dict[str, list[T]]],
    *,
    snapshot: dict[str, Any] | None = None,
    **manifest: Any,
) -> Path:
    """A finished run ``root/run_id`` of ``models``; ``manifest`` keys override the written ones.

    ``snapshot``: every model's recorded settings (``run_meta.config_snapshot``; default ``{}``).
    """
    snapshots = {slug: json.dumps(snapshot or {}) for slug in models}
    run = write_run(root, RunSpec(n=3, models=models, run_id=run_id, snapshots=snapshots))
    path = run / "manifest.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["filters"]["question_ids"] = [q.id for q in QUESTIONS]
    document["grid"]["real_models"] = [slug.split("::")[0] for slug in models]
    document.update(manifest)
    path.write_text(json.dumps(document, indent=2, sort_keys=True), encoding="utf-8")
    return run


def two_runs(root: Path, *, first: dict[str, Any] | None = None, **second: Any) -> tuple[Path, Path]:
    """Run A (ONE right everywhere, TWO always "A") and run B (THREE always "A").

    ``first`` / ``second``: what ``write_panel_run`` changes in run A / run B.
    """
    run_a = write_panel_run(root, RUN_A, {ONE: RIGHT, TWO: ALWAYS_A}, **(first or {}))
    return run_a, write_panel_run(root, RUN_B, {THREE: ALWAYS_A}, **second)
