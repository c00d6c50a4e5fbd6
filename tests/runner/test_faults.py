"""Injected 5xx / 429 / timeouts: the run completes, every slot is accounted for, replay matches."""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from oracleproto.agent.result import SKIPPED_TRAINING_CUTOFF
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.replay import replay_run
from oracleproto.sim.faults import FaultConfig
from oracleproto.store import RunDir
from oracleproto.transport import CassetteStore

#: The issue's mix: 10% 5xx, 5% 429 (Retry-After 0 so the test does not wait), 2% timeouts.
MIXED = FaultConfig(fail_5xx=0.10, fail_429=0.05, fail_timeout=0.02, retry_after_s=0)
CALL_ERRORS = {"server_5xx", "rate_limit", "network"}


def db_errors(run: RunDir) -> tuple[Counter[str | None], int]:
    """Per-slot ``error`` values of every DB, and the number of slots without ``created_at``."""
    errors: Counter[str | None] = Counter()
    missing = 0
    manifest = run.load_manifest()
    for path in run.model_db_paths(manifest).values():
        with sqlite3.connect(path) as conn:
            for i in range(manifest.sampling_n):
                for created, error in conn.execute(f"SELECT s{i}_created_at, s{i}_error FROM run_results"):
                    missing += created is None
                    errors[error] += 1
        conn.close()
    return errors, missing


def stored_prompts(run: RunDir) -> dict[tuple[str, str], tuple[str | None, bool]]:
    """Per (DB, question): the stored ``user_prompt`` and whether any sample of it was answered."""
    out: dict[tuple[str, str], tuple[str | None, bool]] = {}
    manifest = run.load_manifest()
    for path in run.model_db_paths(manifest).values():
        with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as conn:
            errors = ", ".join(f"s{i}_error" for i in range(manifest.sampling_n))
            for qid, prompt, *kinds in conn.execute(
                f"SELECT question_id, user_prompt, {errors} FROM run_results"
            ):
                out[(path.name, qid)] = (prompt, any(kind is None for kind in kinds))
        conn.close()
    return out


def attempt_outcomes(run: RunDir) -> Counter[str]:
    """How every recorded attempt ended, per channel: ``llm:200``, ``search:503``, ``llm:exception``…"""
    outcomes: Counter[str] = Counter()
    for entry in CassetteStore(run.cassettes_dir, writable=False).effective_entries():
        for attempt in entry.attempts:
            status = "exception" if attempt["exception"] else str(attempt["status"])
            outcomes[f"{entry.channel}:{status}"] += 1
    return outcomes


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory, record_sim: Any) -> tuple[RunDir, dict[str, int]]:
    """A recording of 2 models × n = 2 with the mixed faults on chat and search."""
    summary = record_sim(tmp_path_factory.mktemp("faulty"), models=2, samples=2, faults=MIXED)
    return summary.run, summary.errors


def test_faults_were_really_injected_and_retried(faulty: tuple[RunDir, dict[str, int]]) -> None:
    run, _ = faulty
    outcomes = attempt_outcomes(run)
    for channel in ("llm", "search", "detector"):
        assert outcomes[f"{channel}:200"] > 0, outcomes
    retried = {k: v for k, v in outcomes.items() if not k.endswith(":200")}
    kinds = {k.split(":")[1] for k in retried}
    assert "429" in kinds and "exception" in kinds and kinds & {"500", "502", "503"}, outcomes


def test_run_completes_and_every_slot_is_accounted_for(faulty: tuple[RunDir, dict[str, int]]) -> None:
    run, summary_errors = faulty
    assert run.load_manifest().finished_at is not None
    errors, missing = db_errors(run)
    assert missing == 0
    assert sum(errors.values()) == 2 * 16 * 2
    # What is left after retries is a call-error kind, and the summary counts what the DB holds.
    left = {k: v for k, v in errors.items() if k not in (None, SKIPPED_TRAINING_CUTOFF)}
    assert set(left) <= CALL_ERRORS
    assert left == summary_errors


def test_the_prompt_is_stored_by_answered_samples_only(faulty: tuple[RunDir, dict[str, int]]) -> None:
    # As the earlier implementation's writer: error and cutoff rows bring no prompt (COALESCE keeps
    # the first answered sample's), so a question nobody answered keeps user_prompt NULL (checked below).
    prompts = stored_prompts(faulty[0])
    assert prompts and all((prompt is not None) == answered for prompt, answered in prompts.values())


async def test_the_faulty_recording_replays_byte_identically_without_waiting(
    faulty: tuple[RunDir, dict[str, int]], tmp_path: Path
) -> None:
    run, _ = faulty
    clock = FakeClock()
    report = await replay_run(run.root, tmp_path, clock=clock, rand=random.Random(0), progress=False)
    assert [(c.what, c.detail) for c in report.checks if not c.ok] == []
    assert clock.sleeps == []  # retries replay as their final outcome


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        (FaultConfig(fail_5xx=1.0), "server_5xx"),
        (FaultConfig(fail_429=1.0, retry_after_s=0), "rate_limit"),
        (FaultConfig(fail_timeout=1.0), "network"),
    ],
    ids=["5xx", "429", "timeout"],
)
def test_exhausted_retries_leave_the_error_kind(
    fault: FaultConfig, kind: str, tmp_path: Path, record_sim: Any
) -> None:
    # A deliberate 100 % fault run: the circuit breaker would (rightly) stop the timeout case after
    # 8 identical network failures (tests/runner/test_provider_limits.py); here every call must fail.
    summary = record_sim(tmp_path, models=1, samples=1, faults=fault, detector=False, circuit_breaker_calls=0)
    errors, missing = db_errors(summary.run)
    assert missing == 0
    assert errors == Counter({kind: 16})
    assert summary.errors == {kind: 16}
    assert {prompt for prompt, _ in stored_prompts(summary.run).values()} == {None}
    # Every logical call was tried 1 + LLM_RETRY_MAX times before giving up.
    outcomes = attempt_outcomes(summary.run)
    assert sum(outcomes.values()) == 16 * (1 + 5)
    assert outcomes["llm:200"] == 0
