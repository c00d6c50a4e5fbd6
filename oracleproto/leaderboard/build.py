"""Build a leaderboard: runs in, ``leaderboard.html``, ``leaderboard.csv`` and viewer pages out."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracleproto.analysis.cost import PriceTable
from oracleproto.analysis.leakage import AuditBound, Leakage
from oracleproto.analysis.points_f1.compute import PointsF1Result, analyze_points_f1
from oracleproto.analysis.points_f1.leakage import points_f1_leakage
from oracleproto.errors import AnalysisError, OracleprotoError
from oracleproto.leaderboard.document import build_board_document
from oracleproto.leaderboard.page import render_board_page
from oracleproto.leaderboard.publish import check_out, publish
from oracleproto.leaderboard.sources import Board, Source, merge, opened_sources
from oracleproto.leaderboard.table_csv import leaderboard_csv
from oracleproto.view.document import build_document
from oracleproto.view.page import render_page

PAGE = "leaderboard.html"
CSV = "leaderboard.csv"
Progress = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class BoardOutput:
    """What was built and where it went."""

    out: Path
    written: list[Path]
    result: PointsF1Result
    document: dict[str, Any]


def _audits_by_model(board: Board, audits: Sequence[AuditBound]) -> tuple[dict[str, AuditBound], list[str]]:
    """Each audit covers the models of the run it was sampled from; notes say what it sampled."""
    runs = {s.run_id: s for s in board.sources}
    covered: dict[str, AuditBound] = {}
    notes: list[str] = []
    seen: dict[str, AuditBound] = {}
    for audit in audits:
        source = runs.get(audit.run_id or "")
        if source is None:
            raise AnalysisError(
                f"the audit in {audit.where} was sampled from run {audit.run_id or '(none named)'}, which is "
                f"not on this board (runs: {', '.join(runs)}): attach each audit to the run it audits"
            )
        if audit.run_id in seen:
            raise AnalysisError(
                f"two audits of run {audit.run_id} ({seen[audit.run_id].where} and {audit.where}): give one "
                "(score them together with `oracleproto audit score`)"
            )
        seen[source.run_id] = audit
        slugs = [m.slug for m in source.data.models]
        covered.update(dict.fromkeys(slugs, audit))
        sampled = audit.models
        if sampled is not None and set(sampled) != set(slugs):
            notes.append(
                f"the audit of run {source.run_id} sampled {len(sampled)} of its {len(slugs)} models; its "
                "bound is applied to every model of the run (they share its search and detector settings)"
            )
    return covered, notes


def build_leaderboard(
    refs: Sequence[tuple[str, Path]],
    out: Path,
    *,
    prices: PriceTable | None = None,
    display_names: Mapping[str, str] | None = None,
    audits: Sequence[AuditBound] = (),
    views: bool = True,
    progress: Progress = _quiet,
) -> BoardOutput:
    """Score the runs ``refs`` (``(as given, path)``) as one board and write it into ``out``.

    Every file is rendered before anything is written, then all of them are put in place at once
    (``publish.py``): a failure leaves ``out`` as it was.
    """
    check_out(out)
    progress("reading the runs")
    with opened_sources(refs) as sources:
        board = merge(sources)
        progress("points-f1 scores, resamples, pairwise tests, ranks")
        names = dict(display_names) if display_names is not None else board.display_names
        result = analyze_points_f1(board.merged, prices=prices, display_names=names)
        leak: Leakage | None = None
        if audits:
            covered, notes = _audits_by_model(board, audits)
            result.notes.extend(notes)
            leak = points_f1_leakage(result, covered)
        viewers = _viewer_pages(sources, progress, result.notes) if views else {}
        document = build_board_document(board, result, leak, viewers_written=set(viewers))
        files = {PAGE: render_board_page(document), CSV: leaderboard_csv(document), **viewers}
    progress(f"writing {out}")
    written = publish(files, out)
    return BoardOutput(out, written, result, document)


def _viewer_pages(sources: Sequence[Source], progress: Progress, notes: list[str]) -> dict[str, str]:
    """Each run's viewer page (file name → text); a run the viewer cannot read gets a note instead.

    The board stands without them (they are where its rows link to), so a viewer that cannot be
    built does not cost the reader the board: the note names the run and why.
    """
    pages: dict[str, str] = {}
    for source in sources:
        progress(f"viewer of run {source.run_id}")
        try:
            pages[source.viewer] = render_page(build_document(source.opened.root, source=source.ref))
        except OracleprotoError as exc:
            notes.append(
                f"the viewer page of run {source.run_id} could not be built ({exc}); "
                "its rows' links lead nowhere"
            )
    return pages
