"""Run one pending slot's sample through the agent loop (the part a replay shard shares)."""

from __future__ import annotations

from oracleproto.agent import run_sample
from oracleproto.agent.result import SampleResult
from oracleproto.context import CallContext
from oracleproto.dataset.models import Question
from oracleproto.primitives.clock import Clock
from oracleproto.profile import HarnessProfile
from oracleproto.providers.backoff import sample_backoff
from oracleproto.runner.channels import Channels
from oracleproto.runner.jobs import Job
from oracleproto.settings.model import Settings


async def run_job_sample(
    job: Job,
    *,
    question: Question,
    channels: Channels,
    settings: Settings,
    clock: Clock,
    profile: HarnessProfile,
) -> SampleResult:
    """The sample of ``job`` (cell, question id, sample index, prompt) over ``channels``.

    Every request is built in ``profile``'s bytes."""
    cell, question_id, sample, prompt = job
    admission = next(qp.admission for qp in cell.admitted if qp.question.id == question_id)
    react = settings.react.model_copy(update={"max_search_calls": cell.cell.max_search_calls})
    searching = cell.cell.max_search_calls > 0
    # Each sample starts every backoff sequence afresh and continues it across its calls.
    with sample_backoff():
        return await run_sample(
            question=question,
            user_prompt=prompt,
            model=cell.cell.real_model,
            chat=channels.chat,
            search=channels.search if searching else None,
            tools=[dict(profile.llm_request.tool_schema)] if searching else [],
            react=react,
            max_results=cell.cell.results_per_search,
            prediction_cutoff=admission.prediction_cutoff,
            context=CallContext(cell.cell.virtual_slug, question_id, sample),
            clock=clock,
            write_trace=settings.run.write_messages_trace,
            belief=settings.react.belief_protocol,
            profile=profile,
        )
