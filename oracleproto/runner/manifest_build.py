"""The manifest a session writes: run-layout keys from the identity, plan and settings, plus ours."""

from __future__ import annotations

from datetime import datetime

from oracleproto._version import HARNESS_REVISION, __version__
from oracleproto.runner.identity import RunIdentity
from oracleproto.runner.plan import RunPlan
from oracleproto.settings.model import Settings
from oracleproto.store import CassettesInfo, Filters, Grid, Hashes, Manifest, format_timestamp, model_file_map
from oracleproto.store.manifest import HarnessProfileInfo


def build_manifest(
    run_id: str,
    identity: RunIdentity,
    plan: RunPlan,
    settings: Settings,
    *,
    started_at: datetime,
    finished_at: datetime | None,
    cassettes: CassettesInfo,
) -> Manifest:
    """The run-layout manifest (plus the cassette pointer) for this run."""
    slugs = list(plan.virtual_slugs)
    return Manifest(
        run_id=run_id,
        sampling_n=plan.sampling_n,
        models=slugs,
        model_files=model_file_map(slugs),
        model_training_cutoffs={m: d.isoformat() for m, d in identity.training_cutoffs.items()},
        filters=Filters(**identity.filters),
        hashes=Hashes(
            source_db=identity.source_db_hash,
            metadata=identity.metadata_hash,
            prompt_templates=identity.prompt_templates_hash,
        ),
        reflection_protocol_hash=identity.reflection_protocol_hash,
        belief_protocol_hash=identity.belief_protocol_hash,
        grid=Grid(
            r_list=list(settings.run.grid_r_list),
            c_list=list(settings.run.grid_c_list),
            default_r=settings.run.grid_r_list[0],
            default_c=settings.run.grid_c_list[0],
            real_models=list(settings.llm.models),
            n_cells=len(slugs),
        ),
        started_at=format_timestamp(started_at),
        finished_at=None if finished_at is None else format_timestamp(finished_at),
        cassettes=cassettes,
        oracleproto_version=__version__,
        harness_revision=HARNESS_REVISION,
        harness_profile=None
        if identity.profile_record is None
        else HarnessProfileInfo(**identity.profile_record),
    )
