"""``replay PANEL``: replay every member offline (the run replay) and check that each reproduces its
recording byte for byte (manifest and analysis bytes, DB contents as the run replay compares them)
and that every replayed DB holds exactly the rows of the panel's copy."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path

from oracleproto.panel.members import file_sha256
from oracleproto.panel.verify import load_panel, open_recorded_members
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.replay import ReplayReport, replay_run
from oracleproto.settings.model import Settings
from oracleproto.store import RunDir, logical_digest
from oracleproto.store.rundir import DB_DIR


@dataclass(frozen=True)
class PanelReplay:
    """Each member's replay, and the panel-level checks (a line each)."""

    members: tuple[ReplayReport, ...]
    problems: tuple[str, ...]
    matched: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True only when every member reproduced and every DB equals the panel's."""
        return not self.problems and all(r.ok for r in self.members)


def _analysis_pass(run: RunDir, settings: Settings, draw: object) -> None:
    from oracleproto.analysis.postrun import write_run_analysis

    write_run_analysis(run.root, settings.analysis)


def _has_analysis(run: RunDir) -> bool:
    return run.analysis_dir.is_dir() and any(run.analysis_dir.iterdir())


async def replay_panel(
    panel_dir: Path,
    out_root: Path,
    *,
    dataset: Path | None = None,
    progress: bool = False,
    cache_root: Path | None = None,
) -> PanelReplay:
    """Replay every member of ``panel_dir`` into ``out_root/<member run id>/``, one after another."""
    document = load_panel(panel_dir)
    members, checks = open_recorded_members(panel_dir, document, lambda _: None)
    problems = [c.detail for c in checks if not c.ok]
    reports: list[ReplayReport] = []
    matched: list[str] = []
    for member in members:
        report = await replay_run(
            member.run.root,
            out_root,
            clock=SystemClock(),
            rand=secrets.SystemRandom(),
            dataset=dataset,
            progress=progress,
            after=_analysis_pass if _has_analysis(member.run) else None,
            cache_root=cache_root,
            processes=1,
        )
        reports.append(report)
        replayed = RunDir.open(report.replayed)
        for slug, (file, digest) in member.databases.items():
            twin = replayed.db_dir / file
            panel_copy = panel_dir / DB_DIR / file
            # The panel's copy is the member's file byte for byte (its sha256); the replay writes the
            # same rows, compared as the run replay compares DBs (logical content, not page layout).
            if not twin.is_file() or file_sha256(panel_copy) != digest:
                problems.append(f"{DB_DIR}/{file} ({slug}): missing from the replay or the panel")
            elif logical_digest(twin) != logical_digest(panel_copy):
                problems.append(
                    f"{DB_DIR}/{file} ({slug}): the replay of {member.label} differs from the panel's"
                )
            else:
                matched.append(f"{DB_DIR}/{file}")
    return PanelReplay(tuple(reports), tuple(problems), tuple(matched))
