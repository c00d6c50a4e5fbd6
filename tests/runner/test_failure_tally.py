"""The session's failure tally: waits from the monitor, verdicts and results from each sample."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oracleproto.agent.result import SampleResult
from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import FakeClock
from oracleproto.runner.failure_tally import FailureTally
from oracleproto.runner.monitor import RunMonitor
from oracleproto.runner.progress import RunProgress
from oracleproto.runner.runlog import RunLog

SLUG = "sim/careful::r5::c4"
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def sample(search_calls: list[dict[str, Any]], error: str | None = None) -> SampleResult:
    base = SampleResult.empty(error=error or "x", created_at=NOW)
    return SampleResult(**{**base.__dict__, "search_calls": search_calls, "error": error})


SEARCH = {"detector_verdicts": ["keep", "failed:rate_limit", "drop", "failed:network", "keep"]}


def test_failed_verdicts_and_removed_results_per_model() -> None:
    tally = FailureTally(fail_action="drop")
    failures = tally.sample(SLUG, sample([SEARCH, {"error_kind": "server_5xx"}]), {})
    assert dict(failures.detector_failed) == {"rate_limit": 1, "network": 1}
    assert failures.results_removed == 2
    assert dict(failures.search_failed) == {"server_5xx": 1}
    assert failures.short() == "2 verdicts failed, 1 searches failed"
    [line] = tally.lines()
    assert line == (
        f"  {SLUG}: searches failed 1 (server_5xx 1); detector verdicts failed 2 (network 1, "
        "rate_limit 1), 2 search result(s) removed by fail-closed"
    )


def test_keep_removes_nothing_and_a_shared_retried_entry_counts_once() -> None:
    tally = FailureTally(fail_action="keep")
    retried = {"k1": ("search", 2), "k2": ("llm", 1)}
    tally.sample(SLUG, sample([SEARCH]), retried)
    failures = tally.sample(SLUG, sample([], error="rate_limit"), retried)
    assert failures.results_removed == 0
    assert (failures.retries["search"], failures.retries["llm"]) == (2, 1)
    assert dict(failures.sample_errors) == {"rate_limit": 1}
    assert "results kept (LEAK_DETECTOR_FAIL_ACTION=keep)" in tally.lines()[0]


def test_every_wait_is_counted_for_the_samples_model_and_shown_on_its_bar(tmp_path: Path) -> None:
    tally = FailureTally()
    mon = RunMonitor(
        RunLog(tmp_path / "run.log", FakeClock()), retry_after_max_s=300, breaker_calls=0, tally=tally
    )
    shown: list[tuple[str, str]] = []
    mon.annotate = lambda slug, text: shown.append((slug, text))
    with call_context(CallContext(SLUG, "q1", 0)):
        mon.waiting("llm", "sim/careful", "rate_limit backoff", 0.5)  # short: not logged, still counted
        mon.waiting("llm", "sim/careful", "rate_limit backoff", 6.0)
    failures = tally.models[SLUG]
    assert failures.waits["llm"] == 2 and failures.wait_s["llm"] == 6.5
    assert shown[-1] == (SLUG, "2 retries")
    assert tally.has_failures()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_progress_bar_carries_the_failure_counts() -> None:
    stream = _Tty()
    with RunProgress({SLUG: 2}, {}, enabled=True, stream=stream) as progress:
        progress.annotate(SLUG, "3 retries, 1 verdicts failed")
        progress.advance(SLUG)
    assert "3 retries, 1 verdicts failed" in stream.getvalue()
