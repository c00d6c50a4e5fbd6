"""What went wrong during a session, per model: waits and retries per channel, failed detector
verdicts and the search results fail-closed removed, failed searches and errored samples.

The run used to report "call errors: none" while detector verdicts failed and their results were
dropped; this tally feeds the progress display and the end-of-run summary, so no failure that
changed what a model saw goes unreported. ``analysis/call_failures.py`` derives the same counts
for the whole run from its stores (``summary.json``).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from oracleproto.agent.result import SampleResult
from oracleproto.context import current_call_context
from oracleproto.transport import CassetteStore

CHANNELS = ("llm", "search", "detector")
#: Samples named per model and error in the end-of-run summary; the rest are counted (the run log's
#: ``run_finished`` event lists them all).
ERRORED_SHOWN = 12
#: Characters of a failed call's message shown under its samples.
DETAIL_SHOWN = 300


@dataclass
class ModelFailures:
    """One model's failures in this session."""

    #: Channel → retried attempts of the calls the model's samples used (their entries' histories).
    retries: Counter[str] = field(default_factory=Counter)
    #: Channel → waits before a retry (backoff, Retry-After, key cooldown) and their seconds.
    waits: Counter[str] = field(default_factory=Counter)
    wait_s: dict[str, float] = field(default_factory=dict)
    #: Failure kind → failed detector verdicts, and the search results those failures removed.
    detector_failed: Counter[str] = field(default_factory=Counter)
    results_removed: int = 0
    #: Failure kind → searches that failed (the model got an error instead of results).
    search_failed: Counter[str] = field(default_factory=Counter)
    #: ``error`` → samples stored as a call error.
    sample_errors: Counter[str] = field(default_factory=Counter)

    def empty(self) -> bool:
        """True when nothing failed or waited."""
        return not (
            self.retries or self.waits or self.detector_failed or self.search_failed or self.sample_errors
        )

    def short(self) -> str:
        """A few words for the progress bar (empty when nothing happened)."""
        parts = []
        if self.retries or self.waits:
            parts.append(f"{max(sum(self.retries.values()), sum(self.waits.values()))} retries")
        if self.detector_failed:
            parts.append(f"{sum(self.detector_failed.values())} verdicts failed")
        if self.search_failed:
            parts.append(f"{sum(self.search_failed.values())} searches failed")
        if self.sample_errors:
            parts.append(f"{sum(self.sample_errors.values())} samples errored")
        return ", ".join(parts)


def _kinds(counter: Mapping[str, int]) -> str:
    return ", ".join(f"{kind} {count}" for kind, count in sorted(counter.items()))


class FailureTally:
    """Counts per model (virtual slug); fed by the run monitor (waits) and each finished sample."""

    def __init__(self, *, fail_action: str = "drop") -> None:
        self._fail_action = fail_action
        self.models: dict[str, ModelFailures] = {}
        self._retried: dict[str, set[str]] = {}
        #: (model, question id, sample, error) of every sample stored as a call error this session.
        self.errored_samples: list[tuple[str, str, int, str]] = []
        #: (model, kind) → what the last main-LLM call that failed so said (a sample's error is one).
        self._details: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def _model(self, slug: str) -> ModelFailures:
        return self.models.setdefault(slug, ModelFailures())

    def wait(self, channel: str, model: str, seconds: float) -> ModelFailures:
        """A call waits ``seconds`` before retrying; attributed to the sample's model when known."""
        context = current_call_context()
        slug = context.model if context is not None else model
        with self._lock:
            failures = self._model(slug)
            failures.waits[channel] += 1
            failures.wait_s[channel] = failures.wait_s.get(channel, 0.0) + seconds
        return failures

    def sample(
        self, slug: str, result: SampleResult, retries: Mapping[str, tuple[str, int]]
    ) -> ModelFailures:
        """Count a finished sample's retries, failed verdicts, removed results, failed searches, error.

        ``retries`` (``retries_of``) counts once per model: samples share search and detector calls.
        """
        with self._lock:
            failures = self._model(slug)
            seen = self._retried.setdefault(slug, set())
            for key, (channel, count) in retries.items():
                if key not in seen:
                    seen.add(key)
                    failures.retries[channel] += count
            if result.error:
                failures.sample_errors[result.error] += 1
            for call in result.search_calls or ():
                _count_search(failures, call, drop=self._fail_action == "drop")
        return failures

    def errored(self, slug: str, question_id: str, sample: int, error: str) -> None:
        """Name a sample stored as a call error (the summary says which samples to retry)."""
        with self._lock:
            self.errored_samples.append((slug, question_id, sample, error))

    def failure_detail(self, channel: str, kind: str, detail: str) -> None:
        """Keep what a failed main-LLM call said, for its sample's model (the summary shows it)."""
        context = current_call_context()
        if channel != "llm" or context is None or not detail:
            return
        with self._lock:
            self._details[(context.model, kind)] = detail

    def errored_lines(self) -> list[str]:
        """Per model and error, the samples that ended in it (``question #sample``), sorted, and
        what the last such call said."""
        groups: dict[tuple[str, str], list[str]] = {}
        for slug, question_id, sample, error in sorted(self.errored_samples):
            groups.setdefault((slug, error), []).append(f"{question_id} #{sample}")
        out = []
        for (slug, error), slots in sorted(groups.items()):
            shown = ", ".join(slots[:ERRORED_SHOWN])
            more = f", … and {len(slots) - ERRORED_SHOWN} more" if len(slots) > ERRORED_SHOWN else ""
            out.append(f"  {slug}: {error} ({len(slots)}): {shown}{more}")
            detail = self._details.get((slug, error))
            if detail:
                said = " ".join(detail.split())
                said = said if len(said) <= DETAIL_SHOWN else said[: DETAIL_SHOWN - 1] + "…"
                out.append(f"    last: {said}")
        return out

    def absorb_waits(self, models: Mapping[str, ModelFailures]) -> None:
        """Add the waits another process's monitor counted (a replay worker's share of the session)."""
        with self._lock:
            for slug, other in models.items():
                failures = self._model(slug)
                failures.waits.update(other.waits)
                for channel, seconds in other.wait_s.items():
                    failures.wait_s[channel] = failures.wait_s.get(channel, 0.0) + seconds

    def has_failures(self) -> bool:
        """True when any model waited or failed."""
        return any(not m.empty() for m in self.models.values())

    def lines(self) -> list[str]:
        """The end-of-run summary: one line per model that waited or failed."""
        out = []
        for slug in sorted(self.models):
            m = self.models[slug]
            if m.empty():
                continue
            parts = []
            for channel in CHANNELS:
                if m.retries[channel] or m.waits[channel]:
                    parts.append(
                        f"{channel} retries {max(m.retries[channel], m.waits[channel])} "
                        f"(waited {m.wait_s.get(channel, 0.0):.1f} s)"
                    )
            if m.search_failed:
                parts.append(f"searches failed {sum(m.search_failed.values())} ({_kinds(m.search_failed)})")
            if m.detector_failed:
                removed = (
                    f", {m.results_removed} search result(s) removed by fail-closed"
                    if self._fail_action == "drop"
                    else ", results kept (LEAK_DETECTOR_FAIL_ACTION=keep)"
                )
                failed = sum(m.detector_failed.values())
                parts.append(f"detector verdicts failed {failed} ({_kinds(m.detector_failed)}){removed}")
            if m.sample_errors:
                parts.append(f"samples errored {sum(m.sample_errors.values())} ({_kinds(m.sample_errors)})")
            out.append(f"  {slug}: " + "; ".join(parts))
        return out


def retries_of(store: CassetteStore | None, keys: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Entry key → (channel, retried attempts) of the entries ``keys`` that were retried."""
    out: dict[str, tuple[str, int]] = {}
    if store is None:
        return out
    for key in keys:
        entry = store.get(key)
        if entry is not None and len(entry.attempts) > 1:
            out[key] = (entry.channel, len(entry.attempts) - 1)
    return out


def _count_search(failures: ModelFailures, call: Mapping[str, Any], *, drop: bool) -> None:
    kind = call.get("error_kind")
    if kind:
        failures.search_failed[str(kind)] += 1
        return
    for verdict in call.get("detector_verdicts") or ():
        if isinstance(verdict, str) and verdict.startswith("failed:"):
            failures.detector_failed[verdict.removeprefix("failed:")] += 1
            failures.results_removed += int(drop)
