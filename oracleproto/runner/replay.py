"""Replay a recorded run offline into a fresh run directory and compare it with the recording."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracleproto.analysis.writer import PlotDrawer, draw_here
from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.hashes import source_db_hash
from oracleproto.errors import OracleprotoError, StoreError
from oracleproto.primitives.clock import Clock
from oracleproto.primitives.paths import first_missing_ancestor
from oracleproto.runner.execute import Recorded, RunOptions, RunSummary, execute_run
from oracleproto.runner.reconstruct import settings_from_snapshot
from oracleproto.runner.replay_plots import WorkerPlots
from oracleproto.runner.replay_shards import ReplayShard, start_workers, usable_cpus
from oracleproto.runner.resume_guard import check_harness_revision
from oracleproto.runner.stopping import resume_arguments
from oracleproto.settings.model import CacheMode, Settings
from oracleproto.store import Manifest, ModelStore, RunDir, logical_digest, logical_dump, parse_timestamp
from oracleproto.store.naming import RandomBits
from oracleproto.store.rundir import AUDIT_SUBDIR, ON_DEMAND_SUBDIRS
from oracleproto.transport.index import fingerprint
from oracleproto.transport.layout import JOURNAL_DIR, LOCK_FILE, all_cassette_files
from oracleproto.transport.replay_index import replay_index_dir, wants_index
from oracleproto.transport.store import has_leftover_journal

#: The analysis pass of a replay: the replayed run, its settings, and who draws the plots.
AnalysisPass = Callable[[RunDir, Settings, PlotDrawer], None]
#: Processes a large replay uses by default (more rarely pays: each memoises the shared requests).
DEFAULT_REPLAY_PROCESSES = 2


@dataclass(frozen=True)
class Check:
    """One comparison between the recorded and the replayed run."""

    what: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class ReplayReport:
    """Verdict of a replay: every check, and where the replayed run was written."""

    original: Path
    replayed: Path
    checks: tuple[Check, ...]
    summary: RunSummary

    @property
    def ok(self) -> bool:
        """True only when everything matched byte for byte."""
        return all(c.ok for c in self.checks)


def find_dataset(expected_hash: str, candidates: list[Path]) -> Path:
    """The first candidate source DB whose sha256 is the recorded one."""
    for path in candidates:
        if path.is_file() and source_db_hash(path) == expected_hash:
            return path
    tried = ", ".join(str(p) for p in candidates) or "none"
    raise StoreError(
        f"no dataset with the recorded source_db hash {expected_hash[:16]}… (tried: {tried}); "
        "pass --dataset PATH with the exact source DB the run was recorded on"
    )


def _window(line: str, at: int) -> str:
    start = max(0, at - 40)
    return ("…" if start else "") + line[start : at + 80] + ("…" if at + 80 < len(line) else "")


def _first_divergence(a: str, b: str) -> str:
    for i, (left, right) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False)):
        if left != right:
            # Rows start with long prompts: show the text around the first differing character.
            at = next(
                (j for j, (x, y) in enumerate(zip(left, right, strict=False)) if x != y),
                min(len(left), len(right)),
            )
            where = f"line {i + 1}, char {at + 1}"
            return f"{where}: recorded {_window(left, at)!r} vs replayed {_window(right, at)!r}"
    return f"lengths differ ({len(a)} vs {len(b)} chars)"


def _db_pairs(original: RunDir, replayed: RunDir) -> list[tuple[Path, Path]]:
    """Each model DB of ``original`` and where the replay writes its twin."""
    paths = original.model_db_paths(original.load_manifest()).values()
    return [(path, replayed.root / path.relative_to(original.root)) for path in paths]


def db_digests(original: RunDir, replayed: RunDir) -> dict[Path, str]:
    """The logical digests ``compare_runs`` compares, of every DB of both runs that can be read."""
    digests: dict[Path, str] = {}
    for pair in _db_pairs(original, replayed):
        for path in pair:
            try:
                digests[path] = logical_digest(path)
            except (OracleprotoError, OSError):
                continue  # compare_runs meets it again and reports it
    return digests


def compare_runs(original: RunDir, replayed: RunDir, known: dict[Path, str] | None = None) -> list[Check]:
    """Manifest bytes, each DB's logical content, every analysis file, byte for byte.

    ``known``: logical digests already computed (``db_digests``, while the plots were drawn).
    """
    known = known or {}
    checks: list[Check] = []
    a = original.manifest_path.read_text(encoding="utf-8")
    b = replayed.manifest_path.read_text(encoding="utf-8")
    checks.append(Check("manifest.json", a == b, "" if a == b else _first_divergence(a, b)))
    for path, other in _db_pairs(original, replayed):
        if not other.is_file():
            checks.append(Check(f"db/{path.name}", False, "missing from the replay"))
            continue
        # Digests first, one database at a time: two whole dumps held at once were a replay's peak
        # memory. Only a difference needs the texts, to show where they diverge.
        left_digest = known.get(path) or logical_digest(path)
        if left_digest == (known.get(other) or logical_digest(other)):
            checks.append(Check(f"db/{path.name}", True))
            continue
        left, right = logical_dump(path), logical_dump(other)
        checks.append(
            Check(f"db/{path.name}", left == right, "" if left == right else _first_divergence(left, right))
        )
    if original.analysis_dir.is_dir():
        for file in sorted(p for p in original.analysis_dir.rglob("*") if p.is_file()):
            if file.relative_to(original.analysis_dir).parts[0] in (AUDIT_SUBDIR, *ON_DEMAND_SUBDIRS):
                # A refresh audit compares two runs (verify checks it); the others are reports on demand.
                continue
            rel = file.relative_to(original.root)
            twin = replayed.root / rel
            same = twin.is_file() and twin.read_bytes() == file.read_bytes()
            checks.append(
                Check(str(rel), same, "" if same else ("missing" if not twin.is_file() else "bytes differ"))
            )
    return checks


async def replay_run(
    original_dir: Path,
    out_root: Path,
    *,
    clock: Clock,
    rand: RandomBits,
    dataset: Path | None = None,
    progress: bool = True,
    after: AnalysisPass | None = None,
    cache_root: Path | None = None,
    processes: int | None = None,
) -> ReplayReport:
    """Re-execute ``original_dir`` from its cassettes (no socket) into ``out_root/<run id>``.

    With ``cache_root`` a large run is served from the ``cache/`` index of its cassettes (no YAML
    parsed, bounded memory) when it is fresh, and (re)builds it when it is not. ``processes``
    share the samples (``runner/replay_shards.py``); None: two when the run is served from the
    index and this process may use two CPUs, else one. With a worker, ``after`` has it draw the
    plots while this process computes the comparison's digests (``runner/replay_plots.py``).
    """
    recording = _open_recording(original_dir, dataset)
    original = recording.original
    target = out_root / recording.manifest.run_id
    if target.exists():
        raise StoreError(f"{target} already exists; choose an empty --out for the replay")
    all_cassette_files(original.cassettes_dir)  # refuses a symlink out of the run before copying
    cache_dir = (
        replay_index_dir(cache_root.absolute(), fingerprint(original.cassettes_dir))
        if cache_root is not None and wants_index(original.cassettes_dir)
        else None
    )
    created = first_missing_ancestor(target)
    target.mkdir(parents=True)
    count = default_processes(cache_dir) if processes is None else processes
    workers: list[ReplayShard] = []
    try:
        # Started first: a worker imports while this process copies the cassettes and prepares the
        # run. Where no process can be started (limits, a sandbox), the replay runs in this one.
        try:
            workers = start_workers(count)
        except OSError:
            count = 1
        return await _replay_into(
            recording,
            target,
            out_root=out_root,
            workers=workers,
            processes=count,
            cache_dir=cache_dir,
            clock=clock,
            rand=rand,
            progress=progress,
            after=after,
        )
    except BaseException as exc:
        # A failed replay leaves nothing: not the copied cassettes, not a half-written run.
        shutil.rmtree(created if created is not None else target, ignore_errors=True)
        if isinstance(exc, OracleprotoError):
            name_originals(exc, {target / "cassettes": original.cassettes_dir})
        raise
    finally:
        for worker in workers:
            worker.stop()  # a worker not given slots (nothing to run, or a refusal before) ends here


@dataclass(frozen=True)
class _Recording:
    """A finished recording to replay: its run, manifest, settings and source DB."""

    original: RunDir
    manifest: Manifest
    config_snapshot: dict[str, Any]
    cassettes_mode: CacheMode
    settings: Settings
    source: Path


def _open_recording(original_dir: Path, dataset: Path | None) -> _Recording:
    """The recorded run at ``original_dir``, with its settings and source DB; refused unless replayable."""
    original = RunDir.open(original_dir)
    manifest = original.load_manifest()
    if manifest.cassettes is None:
        raise StoreError(
            f"{original.manifest_path}: no 'cassettes' entry — this run was not recorded by oracleproto's "
            "record/replay cache, so it cannot be replayed (re-score it with `oracleproto report`)"
        )
    check_harness_revision(manifest, "replay")
    db_paths = original.model_db_paths(manifest)
    if not db_paths:
        raise StoreError(f"{original.manifest_path}: the run lists no models")
    first_db = next(iter(db_paths.values()))
    with ModelStore.open_existing(first_db) as store:
        meta = store.read_meta()
    settings = settings_from_snapshot(meta.config_snapshot, where=first_db)
    candidates = [dataset] if dataset is not None else [demo_db_path()]
    source = find_dataset(manifest.hashes.source_db, candidates)
    if manifest.finished_at is None or has_leftover_journal(original.cassettes_dir):
        raise StoreError(
            f"run {original.run_id} has not finished (its last session stopped before sealing the "
            "manifest, or left entries in cassettes/.journal), so there is no complete recording to "
            f"replay; resume it first: rerun the command that recorded it with "
            f"{resume_arguments(original.run_id)} (it folds the journal and seals the run), then replay"
        )
    return _Recording(original, manifest, meta.config_snapshot, manifest.cassettes.mode, settings, source)


async def _replay_into(
    recording: _Recording,
    target: Path,
    *,
    out_root: Path,
    workers: list[ReplayShard],
    processes: int,
    cache_dir: Path | None,
    clock: Clock,
    rand: RandomBits,
    progress: bool,
    after: AnalysisPass | None,
) -> ReplayReport:
    """Copy the recording's cassettes into ``target`` (in ``out_root``), replay it there, compare the two."""
    original, manifest = recording.original, recording.manifest
    known: dict[Path, str] = {}
    drawer = _plot_drawer(workers if after else [], original, RunDir(target, manifest.run_id), known)
    # A crash journal or lock file belongs to a process of the original, not to the copy.
    ignore = shutil.ignore_patterns(JOURNAL_DIR, LOCK_FILE)
    shutil.copytree(original.cassettes_dir, target / "cassettes", dirs_exist_ok=True, ignore=ignore)
    recorded = Recorded(
        started_at=parse_timestamp(manifest.started_at),
        finished_at=None if manifest.finished_at is None else parse_timestamp(manifest.finished_at),
        config_snapshot=recording.config_snapshot,
        cassettes_mode=recording.cassettes_mode,
        refresh=manifest.refresh,
        experiment=manifest.experiment,
        prompt_templates_hash=manifest.hashes.prompt_templates,
    )
    options = RunOptions(
        settings=recording.settings,
        source_db=recording.source,
        runs_root=out_root,
        mode="replay",
        run_id=manifest.run_id,
        recorded=recorded,
        progress=progress,
        after=None if after is None else lambda run, settings: after(run, settings, drawer),
        cache_dir=cache_dir,
        replay_processes=processes,
        replay_workers=workers,
    )
    summary = await execute_run(options, clock=clock, rand=rand)
    replayed = RunDir.open(target)
    checks = compare_runs(original, replayed, known)
    _raise_if_stopped()
    return ReplayReport(original.root, replayed.root, tuple(checks), summary)


def _raise_if_stopped() -> None:
    """Raise ``CancelledError`` if a stop (Ctrl-C, SIGTERM) was asked since the last ``await``.

    The analysis and the comparison never await: a stop asked while they run would let the replay
    finish and its task end cancelled anyway, with the run left in place. It ends as every stopped
    replay does instead, removed.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def _plot_drawer(
    workers: list[ReplayShard], original: RunDir, replayed: RunDir, known: dict[Path, str]
) -> PlotDrawer:
    """Who draws the replay's plots: a worker, while this process fills ``known`` (``db_digests``).

    Without ``workers`` (one process, or a replay without an analysis pass: nothing is asked of the
    worker, which then never imports matplotlib), this process, as the pass runs."""
    if not workers:
        return draw_here
    return WorkerPlots(workers[0], lambda: known.update(db_digests(original, replayed)))


def default_processes(cache_dir: Path | None) -> int:
    """Processes a replay uses when not told: a second one pays for its start only on a large run."""
    return min(DEFAULT_REPLAY_PROCESSES, usable_cpus()) if cache_dir is not None else 1


def name_originals(exc: BaseException, renames: dict[Path, Path]) -> None:
    """Rewrite ``exc``'s message so it names the user's files, not the replay's working copies."""

    def mapped(arg: object) -> object:
        if not isinstance(arg, str):
            return arg
        for copy, original in renames.items():
            arg = arg.replace(str(copy), str(original))
        return arg

    exc.args = tuple(mapped(a) for a in exc.args)
