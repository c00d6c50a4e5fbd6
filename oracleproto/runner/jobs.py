"""The pending slots of a run: open every per-model DB, list what is not done, cells interleaved."""

from __future__ import annotations

from datetime import datetime
from itertools import zip_longest

from oracleproto.agent.result import SampleResult
from oracleproto.prompts import render_prompt
from oracleproto.runner.identity import RunIdentity
from oracleproto.runner.plan import CellPlan, RunPlan
from oracleproto.runner.run_texts import outcome_lines
from oracleproto.settings.model import Settings
from oracleproto.store import ModelStore, RunDir, RunMeta

#: One pending slot: (cell, question id, sample index, rendered user prompt).
Job = tuple[CellPlan, str, int, str]


def prepare_stores(
    *,
    plan: RunPlan,
    identity: RunIdentity,
    settings: Settings,
    run: RunDir,
    run_id: str,
    started_at: datetime,
    stores: dict[str, ModelStore],
) -> tuple[list[Job], dict[str, int], dict[str, int]]:
    """Open every per-model DB, pre-seed cutoff exclusions, list the pending slots (cells interleaved)."""
    per_cell: list[list[Job]] = []
    totals: dict[str, int] = {}
    done: dict[str, int] = {}
    n = plan.sampling_n
    for cell in plan.cells:
        slug = cell.cell.virtual_slug
        react_hashes = identity.protocols.fingerprints()
        meta = RunMeta(
            run_id=run_id,
            model=slug,
            sampling_n=n,
            config_snapshot=identity.config_snapshot,
            filters_snapshot=identity.filters,
            source_db_hash=identity.source_db_hash,
            metadata_hash=identity.metadata_hash,
            prompt_templates_hash=identity.prompt_templates_hash,
            training_cutoff=cell.training_cutoff,
            started_at=started_at,
            reflection_protocol_text=identity.protocols.reflection_text,
            reflection_protocol_hash=react_hashes["reflection_protocol_hash"],
            belief_protocol_text=identity.protocols.belief_text,
            belief_protocol_hash=react_hashes["belief_protocol_hash"],
        )
        store = ModelStore.open(
            run.db_path(slug),
            meta=meta,
            questions=identity.questions,
            templates=identity.stored_templates,
            imported_at=started_at,
        )
        stores[slug] = store
        finished = store.done_slots()
        prompts = _cell_prompts(cell, identity)
        for qp in cell.excluded:
            for sample in range(n):
                if (qp.question.id, sample) not in finished:
                    reason = qp.admission.reason
                    assert reason is not None  # an excluded question always has its reason
                    skipped = SampleResult.skipped(started_at, reason)
                    store.write_sample(qp.question.id, sample, None, skipped, entry_keys=[])
        admitted_ids = [qp.question.id for qp in cell.admitted]
        pending = [(cell, q, sample, prompts[q]) for q, sample in store.pending_slots(admitted_ids, n)]
        per_cell.append(pending)
        totals[slug] = len(cell.questions) * n
        done[slug] = totals[slug] - len(pending)
    return interleave(per_cell), totals, done


def interleave(per_cell: list[list[Job]]) -> list[Job]:
    """One pending slot of each cell in turn, each cell in its own order.

    Cells load the channels differently (a model that searches keeps the detector busy, one that
    does not only the LLM); running them side by side keeps every channel's slots busy, where
    cell after cell would leave one channel idle for a whole cell (docs/design/performance.md,
    "Live scheduling").
    """
    return [job for row in zip_longest(*per_cell) for job in row if job is not None]


def _cell_prompts(cell: CellPlan, identity: RunIdentity) -> dict[str, str]:
    protocols = identity.protocols.with_search_calls(cell.cell.max_search_calls)
    lines = outcome_lines(identity.profile)
    return {
        qp.question.id: render_prompt(qp.question, identity.templates, protocols=protocols, lines=lines)
        for qp in cell.questions
    }
