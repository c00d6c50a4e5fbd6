"""``oracleproto panel build``: one virtual run from the per-model DBs of several runs or shards.

The panel directory is laid out like a run (``manifest.json``, ``db/``, ``analysis/``), so the
analysis, ``report``, ``leaderboard`` and ``view`` read it as one; ``panel.json`` says which member
each model comes from, pins every member and DB by SHA-256 and carries a Merkle root over the
members. The panel is built in a temporary folder beside ``--out`` and renamed into place, so a
refused or failed build leaves nothing behind. Building the same members again writes the same
bytes (nothing depends on the clock).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oracleproto.analysis.reader import VIRTUAL_SLUG
from oracleproto.errors import OracleprotoError
from oracleproto.panel.members import (
    Member,
    Progress,
    leaf_digest,
    member_entry,
    member_leaf,
    open_member,
    refuse_mixed,
)
from oracleproto.panel.spec import PanelError, PanelSpec, load_spec
from oracleproto.primitives.fileio import atomic_write_text
from oracleproto.settings.model import AnalysisSettings
from oracleproto.store import Manifest
from oracleproto.store.manifest import MANIFEST_NAME, Grid
from oracleproto.store.naming import parse_timestamp
from oracleproto.store.peek import peek_config_snapshot
from oracleproto.store.rundir import ANALYSIS_DIR, DB_DIR, PANEL_NAME
from oracleproto.transport.integrity import merkle_root

FORMAT = "oracleproto-panel/1"


def _quiet(_: str) -> None:
    return None


@dataclass(frozen=True)
class BuiltPanel:
    """A panel written into place."""

    root: Path
    run_id: str
    merkle_root: str
    members: tuple[Member, ...]


def panel_root(members: Sequence[Member]) -> str:
    """The Merkle root over the members' leaves (run id, seal digest, manifest, entries root, DBs)."""
    return merkle_root(leaf_digest(member_leaf(m)) for m in members)


def panel_run_id(members: Sequence[Member], root: str) -> str:
    """A run id for the panel: when its last member finished, and 4 hex digits of its root."""
    ends = [m.manifest.finished_at or m.manifest.started_at for m in members]
    last = max(parse_timestamp(t) for t in ends)
    return f"{last:%Y%m%d-%H%M%S}-{root[:4]}"


def _real(slug: str) -> str:
    match = VIRTUAL_SLUG.match(slug)
    return match.group(1) if match else slug


def plan_order(members: Sequence[Member], slugs: list[str], order: Sequence[str] | None = None) -> list[str]:
    """``slugs`` in the panel's model order: ``order`` (real model slugs, the panel file's
    ``models``) when given, else the experiment's (its models, sorted), else member order; the grid
    cells of one model stay together in recorded order."""
    experiment = members[0].manifest.experiment
    if order is None and experiment is None:
        return slugs
    ranked = list(order) if order is not None else list(experiment.models if experiment else [])
    rank = {model: i for i, model in enumerate(ranked)}
    return sorted(slugs, key=lambda slug: rank.get(_real(slug), len(rank)))


def check_order(members: Sequence[Member], order: Sequence[str] | None) -> None:
    """The panel file's ``models`` must list each real model of the members once, and no other."""
    if order is None:
        return
    present = {_real(slug) for m in members for slug in m.databases}
    twice = sorted({m for m in order if list(order).count(m) > 1})
    missing, extra = sorted(present - set(order)), sorted(set(order) - present)
    problems = [
        *(f"{m} is listed twice" for m in twice),
        *(f"{m} is not listed (a member records it)" for m in missing),
        *(f"{m} is listed but no member records it" for m in extra),
    ]
    if problems:
        raise PanelError(
            "the panel file's models (the panel's model order) must list every model of the members once: "
            + "; ".join(problems)
            + ". Nothing was written."
        )


def merged_manifest(members: Sequence[Member], run_id: str, order: Sequence[str] | None = None) -> Manifest:
    """The run view of the panel: every member's models, in member order, under one manifest."""
    first = members[0].manifest
    models = plan_order(members, [slug for m in members for slug in m.manifest.models], order)
    real = plan_order(members, [slug for m in members for slug in m.manifest.grid.real_models], order)
    grid = Grid(
        r_list=first.grid.r_list,
        c_list=first.grid.c_list,
        default_r=first.grid.default_r,
        default_c=first.grid.default_c,
        real_models=real,
        n_cells=sum(m.manifest.grid.n_cells for m in members),
    )
    cutoffs = {k: v for m in members for k, v in m.manifest.model_training_cutoffs.items()}
    experiment = None
    if first.experiment is not None:
        experiment = first.experiment.model_copy(update={"shard_index": None, "shard_count": None})
    starts = [m.manifest.started_at for m in members]
    ends = [m.manifest.finished_at for m in members]
    data: dict[str, Any] = first.model_dump(mode="python")
    for key in ("cassettes", "refresh", "sample_entries_root"):
        data.pop(key, None)
    data.update(
        run_id=run_id,
        models=models,
        model_files={slug: m.databases[slug][0] for m in members for slug in m.manifest.models},
        model_training_cutoffs=cutoffs,
        grid=grid,
        started_at=min(starts, key=parse_timestamp),
        finished_at=None if None in ends else max((e for e in ends if e), key=parse_timestamp),
        experiment=experiment,
    )
    return Manifest.model_validate(data)


def panel_document(
    members: Sequence[Member],
    panel_dir: Path,
    run_id: str,
    root: str,
    name: str | None,
    *,
    order: Sequence[str] | None = None,
) -> dict[str, Any]:
    """``panel.json``: the members, where each model comes from, and the root over the members."""
    first = members[0].manifest
    return {
        "format": FORMAT,
        "name": name,
        "run_id": run_id,
        "experiment": None if first.experiment is None else first.experiment.id,
        "members": [member_entry(m, panel_dir) for m in members],
        "models": {slug: m.run_id for m in members for slug in m.databases},
        "order": None if order is None else list(order),
        "root": root,
    }


def panel_text(document: dict[str, Any]) -> str:
    """Stable text: sorted keys, indent 2, trailing newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def analysis_settings(members: Sequence[Member]) -> AnalysisSettings:
    """The analysis settings the first member was recorded with (the panel's analysis uses them)."""
    from oracleproto.runner.reconstruct import settings_from_snapshot

    first = members[0]
    slug = next(iter(first.databases))
    path = first.run.db_dir / first.databases[slug][0]
    snapshot = peek_config_snapshot(path)
    if snapshot is None:
        raise PanelError(f"{path}: no run_meta config snapshot; the member cannot be analysed")
    return settings_from_snapshot(snapshot, where=path).analysis


def write_panel_files(
    members: Sequence[Member], target: Path, final: Path, name: str | None, order: Sequence[str] | None = None
) -> str:
    """Write the panel into ``target`` (as if it stood at ``final``); returns its run id."""
    from oracleproto.analysis.postrun import write_run_analysis
    from oracleproto.verify.attest import write_attestation

    root = panel_root(members)
    run_id = panel_run_id(members, root)
    (target / DB_DIR).mkdir(parents=True)
    (target / ANALYSIS_DIR).mkdir()
    for member in members:
        for file, _ in member.databases.values():
            shutil.copyfile(member.run.db_dir / file, target / DB_DIR / file)
    merged_manifest(members, run_id, order).write(target / MANIFEST_NAME)
    document = panel_document(members, final, run_id, root, name, order=order)
    atomic_write_text(target / PANEL_NAME, panel_text(document))
    write_run_analysis(target, analysis_settings(members))
    write_attestation(target)
    return run_id


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise PanelError(f"{out} exists and is not an empty folder; give --out a new or empty folder")


def build_panel(
    spec_path: Path, out: Path, *, store_url: str | None = None, progress: Progress = _quiet
) -> BuiltPanel:
    """Build the panel ``spec_path`` describes into ``out`` (new or empty); all or nothing."""
    spec: PanelSpec = load_spec(spec_path)
    _check_out(out)
    base = spec_path.resolve().parent
    members = []
    for item in spec.member:
        progress(f"member {item.ref}")
        members.append(open_member(item, base, spec.store or store_url, progress))
    refuse_mixed(members)
    check_order(members, spec.models)
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.panel-", dir=out.parent))
    try:
        progress("databases, manifest and analysis")
        staged = tmp / "panel"
        try:
            run_id = write_panel_files(members, staged, out, spec.name, spec.models)
        except OracleprotoError as exc:
            raise PanelError(f"the panel could not be built: {exc}. Nothing was written.") from None
        _check_out(out)  # another process may have filled it meanwhile
        if out.exists():
            out.rmdir()
        staged.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return BuiltPanel(out, run_id, panel_root(members), tuple(members))
