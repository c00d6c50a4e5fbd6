"""Whether rerunning a finished run's command has anything to do, decided without writing a byte.

A rerun of the record command on a finished run used to write the manifest (``finished_at`` None,
then a new one), restamp every DB's ``finished_at``, append to the log and rewrite the analysis:
a run sealed by ``attestation.json`` no longer verified after a rerun that did nothing. A finished
run is left as it is when none of what a session would do remains: no slot to (re)do (every
slot stored and not ended in a call error, cutoff exclusions included), no crash journal to fold,
and — when the command writes the analysis — an analysis folder the pass completed (its marker,
no temp or moved-aside copy of a killed swap).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from oracleproto.errors import OracleprotoError
from oracleproto.runner.plan import RunPlan
from oracleproto.store import Manifest, ModelStore, RunDir
from oracleproto.store.rundir import ANALYSIS_MARKER
from oracleproto.transport.store import has_leftover_journal


def _analysis_complete(analysis_dir: Path) -> bool:
    """The pass's marker is there and no swap was interrupted (``writer.remove_leftovers``' names)."""
    parent, name = analysis_dir.parent, analysis_dir.name
    leftovers = [*parent.glob(f".{name}.tmp-*"), *parent.glob(f".{name}.old-*")]
    return (analysis_dir / ANALYSIS_MARKER).is_file() and not leftovers


def nothing_pending(run: RunDir, existing: Manifest | None, plan: RunPlan, *, analysis: bool) -> bool:
    """True when ``run`` finished and a session of ``plan`` would find nothing to do (reads only).

    Anything unreadable answers False: the session then runs as before and reports the problem.
    """
    if existing is None or existing.finished_at is None:
        return False
    try:
        if has_leftover_journal(run.cassette_path(existing)):
            return False
        if analysis and not _analysis_complete(run.analysis_dir):
            return False
        paths = run.model_db_paths(existing)
        for cell in plan.cells:
            path = paths.get(cell.cell.virtual_slug)
            if path is None:
                return False
            with ModelStore.open_existing(path) as store:
                if store.sampling_n != plan.sampling_n:
                    return False
                done = store.done_slots()
            slots = ((q.question.id, i) for q in cell.questions for i in range(plan.sampling_n))
            if any(slot not in done for slot in slots):
                return False
    except (OSError, sqlite3.Error, OracleprotoError):
        return False
    return True
