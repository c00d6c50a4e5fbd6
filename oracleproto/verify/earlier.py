"""Verifying a run the paper's earlier implementation wrote (run-layout.md: "our reader must accept them").

Recognised by its manifest: none of oracleproto's additions (``cassettes``, ``oracleproto_version``,
``refresh``, ``sample_entries_root``; :attr:`Manifest.earlier_implementation`). Such a run recorded
no provider exchanges, so the recording checks do not apply; the hash chain, the dataset and the
analysis (regenerated under ``reference-v4``, the convention of that implementation's analysis)
are checked as for ours. Its own conventions are accepted: no trailing newline in the manifest,
per-file timestamps (``chain.py``), and a flat ``config_snapshot`` that names its grid cell.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

from oracleproto.settings.model import AnalysisSettings
from oracleproto.store import Manifest, RunDir, RunMeta, parse_virtual_slug
from oracleproto.store.rundir import ANALYSIS_MARKER
from oracleproto.store.schema import SAMPLE_ENTRIES_TABLE
from oracleproto.verify.findings import Check, failed, not_applicable, passed

#: Why the recording checks do not apply, said once per check.
NO_RECORDING = (
    "not applicable: written by the earlier implementation (manifest.json has no 'cassettes' nor "
    "'oracleproto_version'), which records no provider exchanges: there is no recording to check"
)
#: The key the earlier implementation adds to each DB's snapshot: the grid cell of that DB.
GRID_ORIGIN = "grid_origin"
#: The convention of the earlier implementation's own analysis (scoring-conventions.md).
EARLIER_CONVENTION = "reference-v4"


def accepted_manifest_bytes(manifest: Manifest) -> tuple[bytes, ...]:
    """The manifest byte forms ``verify`` accepts: ours, and for the earlier layout also without newline."""
    canonical = manifest.to_json().encode("utf-8")
    # The earlier implementation writes json.dumps(indent=2, sort_keys=True, ensure_ascii=False) as is.
    return (canonical, canonical[:-1]) if manifest.earlier_implementation else (canonical,)


def recording_checks() -> list[Check]:
    """The checks that need a recording, each marked not applicable."""
    return [
        not_applicable("cassettes", NO_RECORDING),
        not_applicable("sample entries root", NO_RECORDING),
    ]


def _has_table(path: Path, table: str) -> bool:
    uri = f"{path.resolve().as_uri()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        row = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)
        ).fetchone()
    return row is not None


def _ours(snapshot: Mapping[str, Any]) -> bool:
    """oracleproto's snapshot has one object per settings section; the earlier one is flat."""
    return isinstance(snapshot.get("llm"), dict)


def check_layout_coherent(run: RunDir, metas: Mapping[str, RunMeta], db_paths: Mapping[str, Path]) -> Check:
    """A manifest without our keys must sit in a run without our traces; else the manifest was edited."""
    what = "earlier-implementation layout"
    traces: list[str] = []
    if run.cassettes_dir.is_dir() and any(run.cassettes_dir.iterdir()):
        traces.append("cassettes/ holds files")
    traces += [
        f"{label} holds oracleproto's sectioned config_snapshot"
        for label, m in metas.items()
        if _ours(m.config_snapshot)
    ]
    for path in db_paths.values():
        # An unreadable DB has failed its own check already; the next ones are still looked at.
        with suppress(sqlite3.DatabaseError):
            if _has_table(path, SAMPLE_ENTRIES_TABLE):
                traces.append(f"db/{path.name} has oracleproto's {SAMPLE_ENTRIES_TABLE} table")
    if traces:
        return failed(
            what,
            "manifest.json has none of oracleproto's keys (the earlier implementation's layout), yet "
            + "; ".join(traces)
            + ": the manifest lost its 'cassettes' and 'oracleproto_version' keys; restore it from a backup",
        )
    return passed(what, "manifest without oracleproto's additions, flat config snapshots, no cassettes")


def check_snapshots_agree(metas: Mapping[str, RunMeta]) -> Check:
    """The DBs' snapshots agree apart from ``grid_origin``, which must name each DB's own cell."""
    what = "config_snapshot agreement"
    labels = list(metas)
    problems: list[str] = []
    for label, meta in metas.items():
        origin = meta.config_snapshot.get(GRID_ORIGIN)
        if origin is None:
            continue
        real, r, c = parse_virtual_slug(meta.model)
        cell = {"real_model": real, "R": r, "C": c}
        if not isinstance(origin, dict) or {k: origin.get(k) for k in cell} != cell:
            problems.append(
                f"{label}: run_meta.config_snapshot.{GRID_ORIGIN} {origin!r:.80} is not its cell {cell}"
            )
    rest = {
        label: {k: v for k, v in m.config_snapshot.items() if k != GRID_ORIGIN} for label, m in metas.items()
    }
    problems += [
        f"{label}: run_meta.config_snapshot differs from the one in {labels[0]} (beyond {GRID_ORIGIN})"
        for label in labels[1:]
        if rest[label] != rest[labels[0]]
    ]
    if problems:
        return failed(what, "; ".join(problems))
    return passed(what, f"{len(labels)} databases, equal apart from each cell's {GRID_ORIGIN}")


def analysis_settings() -> AnalysisSettings:
    """The analysis the earlier implementation published: ``reference-v4``, our bootstrap defaults."""
    settings: AnalysisSettings = AnalysisSettings.from_values({"convention": EARLIER_CONVENTION})
    return settings


def foreign_analysis(analysis_dir: Path) -> Check | None:
    """Not applicable when ``analysis/`` holds that implementation's own files (no marker of ours)."""
    if (
        not analysis_dir.is_dir()
        or (analysis_dir / ANALYSIS_MARKER).is_file()
        or not any(analysis_dir.iterdir())
    ):
        return None
    return not_applicable(
        "analysis/",
        f"written by the earlier implementation's own analysis pass (no {ANALYSIS_MARKER} marker), "
        f"whose files oracleproto does not produce: not regenerated; `oracleproto report RUN --convention "
        f"{EARLIER_CONVENTION} --out DIR` writes oracleproto's {EARLIER_CONVENTION} analysis of it",
    )
