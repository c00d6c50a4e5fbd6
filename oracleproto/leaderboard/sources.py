"""The runs a leaderboard is built from: opened, read, checked to be one experiment, merged.

Each reference is a run directory, a run id, a bundle (.tar.gz, imported and checked into a
temporary folder for as long as the board is built) or ``demo``. Their models are merged into one
``RunData`` (plan order, run after run) only when every run has the first one's experiment
identity (``identity.py``); otherwise nothing is merged and the error names each difference.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from oracleproto.analysis.names import recorded_display_names
from oracleproto.analysis.reader import RunData, read_run
from oracleproto.errors import AnalysisError
from oracleproto.leaderboard.identity import differences
from oracleproto.view.source import OpenedRun, opened_run

#: What a viewer file may be named from a run id: the run-id alphabet and nothing that moves a URL.
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
VIEWER_NAME = "oracleproto-view-{label}.html"


@dataclass(frozen=True)
class Source:
    """One run of the board: how the user named it, where it was read from, what was read.

    ``viewer`` is the file name of its viewer page beside the board: ``view``'s default name made
    safe (:func:`viewer_names`), so a row's link is a plain relative file name and a fragment.
    """

    ref: str
    opened: OpenedRun
    data: RunData
    viewer: str

    @property
    def run_id(self) -> str:
        """The run id its manifest names."""
        return self.data.run_id


def viewer_names(run_ids: Sequence[str]) -> list[str]:
    """Each run's viewer file name: ``oracleproto-view-<run id>.html``, unique among the runs.

    A run id from a stranger's manifest may hold any character: everything outside ``[A-Za-z0-9._-]``
    becomes ``_`` (nothing that moves a URL or a path), and two ids that become the same name are
    told apart by a ``-2``, ``-3``… suffix in the order given.
    """
    names: list[str] = []
    for run_id in run_ids:
        label = _UNSAFE.sub("_", run_id) or "run"
        name, k = VIEWER_NAME.format(label=label), 1
        while name in names:
            k += 1
            name = VIEWER_NAME.format(label=f"{label}-{k}")
        names.append(name)
    return names


@dataclass(frozen=True)
class Board:
    """The runs, merged into one run of every model; ``origin`` maps each model to its source."""

    sources: tuple[Source, ...]
    merged: RunData
    origin: dict[str, Source]
    #: Real slug → display name, the union of what the runs recorded (the first run's name wins).
    display_names: dict[str, str]
    notes: tuple[str, ...] = ()


@contextmanager
def opened_sources(refs: Sequence[tuple[str, Path]]) -> Iterator[list[Source]]:
    """Open and read every ``(ref, path)``; bundles stay extracted until the block ends."""
    with ExitStack() as stack:
        read = []
        for ref, path in refs:
            opened = stack.enter_context(opened_run(path))
            read.append((ref, opened, read_run(opened.root)))
        names = viewer_names([data.run_id for _, _, data in read])
        yield [Source(ref, opened, data, name) for (ref, opened, data), name in zip(read, names, strict=True)]


def merge(sources: Sequence[Source]) -> Board:
    """One board of every model of ``sources``; refuses runs of different experiments."""
    first = sources[0]
    problems: list[str] = []
    seen_runs: dict[str, str] = {}
    distinct: list[Source] = []
    for source in sources:
        if source.run_id in seen_runs:
            problems.append(
                f"run {source.run_id} is given twice ({seen_runs[source.run_id]} and {source.ref}): "
                "give it once"
            )
        else:
            distinct.append(source)
        seen_runs.setdefault(source.run_id, source.ref)
    for source in distinct[1:]:
        found = differences(first.data, source.data)
        if found:
            listed = "\n".join(f"    {d}" for d in found)
            problems.append(f"run {source.run_id} ({source.ref}) differs from run {first.run_id}:\n{listed}")
    origin: dict[str, Source] = {}
    for source in distinct:
        for model in source.data.models:
            if model.slug in origin:
                problems.append(
                    f"model {model.slug} is in run {origin[model.slug].run_id} and in run {source.run_id}: "
                    "a board has one row per model configuration; leave one of the runs out"
                )
            origin.setdefault(model.slug, source)
    if problems:
        raise AnalysisError(
            "these runs cannot stand on one leaderboard (their models are compared on one population "
            "and one set of resamples only when the experiment is the same):\n  "
            + "\n  ".join(problems)
            + "\nNothing was written."
        )
    names, notes = _names(sources)
    merged = RunData(
        run_dir=first.data.run_dir,
        manifest={**first.data.manifest, "run_id": "+".join(s.run_id for s in sources)},
        models=tuple(m for s in sources for m in s.data.models),
    )
    return Board(tuple(sources), merged, origin, names, tuple(notes))


def _names(sources: Sequence[Source]) -> tuple[dict[str, str], list[str]]:
    """The runs' recorded display names together; a model named differently keeps the first name."""
    names: dict[str, str] = {}
    notes = []
    for source in sources:
        for slug, name in recorded_display_names(source.data).items():
            if slug in names and names[slug] != name:
                notes.append(
                    f"{slug} is named {names[slug]!r} by an earlier run and {name!r} by run {source.run_id}: "
                    f"shown as {names[slug]!r} (--names sets it)"
                )
            names.setdefault(slug, name)
    return names, notes
