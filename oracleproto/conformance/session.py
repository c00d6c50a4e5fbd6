"""Run our harness against a capture: a real recording run whose live requests the capture answers.

The run goes through everything a ``run --record`` does (admission, the ReAct loop, the three
channels, the record/replay cache with the profile's request sharing, the store), into a scratch
runs root; only the network is replaced by the responder. Waits (backoff, Retry-After) are not
slept: the captured answers are already there.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from pathlib import Path

from pydantic import SecretStr

from oracleproto.conformance.build import build_responder
from oracleproto.conformance.report import ConformanceReport, responder_report
from oracleproto.primitives.clock import SystemClock
from oracleproto.prompts import render_prompt
from oracleproto.runner.execute import RunOptions, RunSummary, execute_run
from oracleproto.runner.identity import resolve_identity
from oracleproto.runner.run_texts import load_run_texts, outcome_lines, with_protocol_switches
from oracleproto.settings.model import Settings

#: Base URLs of a conformance run: requests never leave the process (the responder answers them).
LLM_BASE_URL = "http://conformance.invalid/v1"
SEARCH_BASE_URL = "http://conformance.invalid"
#: Stand-in keys (the captured bodies' keys are masked on both sides before comparing).
STAND_IN_KEYS = {"llm": "conformance-llm-key-0001", "search": "conformance-search-key-0001"}


class _NoWaitClock(SystemClock):
    """The system clock, except that waits return at once (the capture answers without delay)."""

    async def sleep(self, seconds: float) -> None:
        """Yield to the loop, without waiting."""
        await asyncio.sleep(0)


@dataclass(frozen=True)
class ConformanceResult:
    """The comparison and what the run did."""

    report: ConformanceReport
    summary: RunSummary


def conformance_settings(settings: Settings, source_db: Path) -> Settings:
    """``settings`` pointed at the responder: stand-in URLs (and keys where none are set), the dataset."""
    llm_key = settings.llm.api_key
    if llm_key is None or not llm_key.get_secret_value().strip():
        llm_key = SecretStr(STAND_IN_KEYS["llm"])
    search_keys = list(settings.search.api_keys) or [SecretStr(STAND_IN_KEYS["search"])]
    llm = settings.llm.model_copy(update={"base_url": LLM_BASE_URL, "api_key": llm_key})
    search = settings.search.model_copy(update={"base_url": SEARCH_BASE_URL, "api_keys": search_keys})
    # The detector calls the LLM's endpoint (the capture answers both channels on its chat path).
    detector = settings.detector.model_copy(update={"base_url": None})
    run = settings.run.model_copy(update={"source_db": source_db})
    return settings.model_copy(update={"llm": llm, "search": search, "detector": detector, "run": run})


def _rendered_prompts(settings: Settings, source_db: Path) -> dict[str, str]:
    """Our user prompt per question (the first grid cell's), to identify captured questions exactly."""
    texts = load_run_texts(settings)
    settings = with_protocol_switches(settings, texts)
    identity = resolve_identity(settings, source_db, texts=texts)
    protocols = identity.protocols.with_search_calls(settings.run.grid_c_list[0])
    lines = outcome_lines(identity.profile)
    return {
        q.id: render_prompt(q, identity.templates, protocols=protocols, lines=lines)
        for q in identity.questions
    }


async def run_conformance(
    capture: Path, settings: Settings, source_db: Path, runs_root: Path
) -> ConformanceResult:
    """Run ``settings`` (already pointed at the responder) against ``capture`` into ``runs_root``."""
    texts = load_run_texts(settings)
    identity = resolve_identity(with_protocol_switches(settings, texts), source_db, texts=texts)
    detector_model = settings.detector.model if settings.detector.enabled and settings.detector.model else ""
    responder = build_responder(
        capture,
        detector_model=detector_model,
        detector_template=identity.profile.detector.template,
        questions=identity.questions,
        rendered_prompts=_rendered_prompts(settings, source_db),
    )
    options = RunOptions(
        settings=settings,
        source_db=source_db,
        runs_root=runs_root,
        mode="record",
        progress=False,
        inner_transport=responder,
    )
    summary = await execute_run(options, clock=_NoWaitClock(), rand=random.Random(0))
    return ConformanceResult(responder_report(responder, capture.name), summary)


__all__ = ["ConformanceResult", "conformance_settings", "run_conformance"]
