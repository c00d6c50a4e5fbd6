"""What failed while a run was recorded, per model: retries and waits per channel, failed detector
verdicts and the search results fail-closed removed, failed searches and errored samples.

Derived only from what the run stores hold, so ``summary.json`` regenerates from the run alone:
the per-model DBs (``search_calls``, ``error``) give the verdicts, results and samples; the
cassettes give every logical call's attempt history (``oracleproto.attempts``: status or exception,
latency, time), hence the retries, the failed attempts by status and the time waited between
attempts (the gap between two attempts minus the second one's latency). Only the entries the
model's stored samples used count (``oracleproto_sample_entries``); a search or detector entry two
models used counts for both. The cassettes are scanned, not parsed as YAML (``cassette_scan.py``):
the attempt records are a few fixed keys, and a full parse of a large run's cassettes takes seconds.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from oracleproto.analysis.cassette_scan import Call, scan
from oracleproto.analysis.reader import EXCLUSION_ERRORS, ModelRun, RunData
from oracleproto.primitives.sqlite_readonly import connect_readonly

CHANNELS = ("llm", "search", "detector")
SAMPLE_ENTRIES_TABLE = "oracleproto_sample_entries"


def recorded_calls(cassette_dir: Path) -> dict[str, Call | Any]:
    """Every logical call by entry key, the newest generation winning (a refresh's re-recording).

    A call with at most one attempt adds nothing to any count (no retry, no wait, no failed
    attempt), so only its generation is kept in place of the call (issue 18: the held calls grew
    with the run); a call with retries is kept whole.
    """
    calls: dict[str, Call | Any] = {}
    if not cassette_dir.is_dir():
        return calls
    for path in sorted(cassette_dir.rglob("*.yaml")):
        for call in scan(path):
            held = calls.get(call.key)
            if held is None or int(call.generation) >= int(_generation(held)):
                calls[call.key] = call if len(call.attempts) > 1 else call.generation
    return calls


def _generation(held: Call | Any) -> Any:
    return held.generation if isinstance(held, Call) else held


def _sample_keys(db: Path, wanted: set[str]) -> set[str] | None:
    """Which of ``wanted`` the model's stored samples used (None: the DB predates the table)."""
    with connect_readonly(db) as conn:
        known = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (SAMPLE_ENTRIES_TABLE,)).fetchone()
        if known is None:
            return None
        keys: set[str] = set()
        for (raw,) in conn.execute(f"SELECT entry_keys FROM {SAMPLE_ENTRIES_TABLE}"):
            value = json.loads(raw) if raw else []
            # Only the keys asked about are held: every other key's call counts for nothing.
            keys.update(k for k in value if isinstance(k, str) and k in wanted)
        return keys


def _stamp(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def _waited_s(attempts: list[dict[str, Any]]) -> float:
    """Seconds between attempts not spent in them (backoff, Retry-After, key cooldown)."""
    waited = 0.0
    for before, after in itertools.pairwise(attempts):
        start, end = _stamp(before.get("recorded_at")), _stamp(after.get("recorded_at"))
        latency = after.get("latency_ms")
        if start is None or end is None or not isinstance(latency, int):
            continue
        waited += max(0.0, (end - start).total_seconds() - latency / 1000)
    return waited


def _failed_as(attempt: Mapping[str, Any]) -> str:
    status = attempt.get("status")
    return f"HTTP {status}" if status is not None else str(attempt.get("exception") or "no response")


def _retries(calls: Mapping[str, Call | Any], keys: set[str] | None, slug: str) -> dict[str, Any]:
    retries: Counter[str] = Counter()
    waited: dict[str, float] = dict.fromkeys(CHANNELS, 0.0)
    failed: dict[str, Counter[str]] = {channel: Counter() for channel in CHANNELS}
    for key, call in calls.items():
        if not isinstance(call, Call):
            continue  # at most one attempt: counts for nothing (recorded_calls)
        used = key in keys if keys is not None else call.model == slug
        if not used or call.channel not in CHANNELS:
            continue
        retries[call.channel] += max(0, len(call.attempts) - 1)
        waited[call.channel] += _waited_s(call.attempts)
        for attempt in call.attempts[:-1]:
            failed[call.channel][_failed_as(attempt)] += 1
    return {
        "retries": {channel: retries[channel] for channel in CHANNELS},
        "wait_s": {channel: round(waited[channel], 3) for channel in CHANNELS},
        "retried_on": {channel: dict(sorted(failed[channel].items())) for channel in CHANNELS},
    }


def _fail_action(m: ModelRun) -> str:
    raw = m.run_meta.get("config_snapshot")
    try:
        snapshot = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        snapshot = None
    detector = snapshot.get("detector") if isinstance(snapshot, dict) else None
    action = detector.get("fail_action") if isinstance(detector, dict) else None
    return str(action) if action in ("drop", "keep") else "drop"


def _stored(db: Path, n: int) -> dict[str, Any]:
    """Failed verdicts, removed results, failed searches and errored samples of one model's DB."""
    verdicts: Counter[str] = Counter()
    searches: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    cols = ", ".join(f"s{j}_search_calls, s{j}_error" for j in range(n))
    with connect_readonly(db) as conn:
        for row in conn.execute(f"SELECT {cols} FROM run_results"):
            for j in range(n):
                calls_raw, error = row[2 * j], row[2 * j + 1]
                if error and error not in EXCLUSION_ERRORS:
                    errors[str(error)] += 1
                try:
                    calls = json.loads(calls_raw) if calls_raw else []
                except json.JSONDecodeError:
                    calls = []
                for call in calls if isinstance(calls, list) else ():
                    if not isinstance(call, dict):
                        continue
                    if call.get("error_kind"):
                        searches[str(call["error_kind"])] += 1
                        continue
                    for verdict in call.get("detector_verdicts") or ():
                        if isinstance(verdict, str) and verdict.startswith("failed:"):
                            verdicts[verdict.removeprefix("failed:")] += 1
    return {
        "detector_failed": dict(sorted(verdicts.items())),
        "search_failed": dict(sorted(searches.items())),
        "sample_errors": dict(sorted(errors.items())),
    }


def call_failures(run: RunData) -> dict[str, dict[str, Any]]:
    """Per virtual model: retries, waits and failed attempts per channel (from the cassettes, None
    without them), failed verdicts, removed results, failed searches and errored samples."""
    cassettes = run.run_dir / "cassettes"
    calls = recorded_calls(cassettes) if cassettes.is_dir() else None
    retried = set() if calls is None else {key for key, call in calls.items() if isinstance(call, Call)}
    out: dict[str, dict[str, Any]] = {}
    for m in run.models:
        db = run.run_dir / "db" / m.file
        stored = _stored(db, m.table.n)
        drop = _fail_action(m) == "drop"
        failed = sum(stored["detector_failed"].values())
        entry: dict[str, Any] = {
            **stored,
            "detector_fail_action": "drop" if drop else "keep",
            "results_removed": failed if drop else 0,
        }
        if calls is None:
            entry.update(retries=None, wait_s=None, retried_on=None)
        else:
            entry.update(_retries(calls, _sample_keys(db, retried), m.slug))
        out[m.slug] = entry
    return out


def failure_notes(failures: Mapping[str, Mapping[str, Any]], shown: Mapping[str, str]) -> list[str]:
    """One note per model whose calls were retried, whose searches failed or whose detector verdicts
    failed (none when nothing did)."""
    notes = []
    for slug, entry in failures.items():
        parts = []
        retries = entry.get("retries") or {}
        for channel in CHANNELS:
            if retries.get(channel):
                waited = entry["wait_s"][channel]
                parts.append(f"{channel} retries {retries[channel]} ({waited:.1f} s waited)")
        if entry["search_failed"]:
            parts.append(f"failed searches {sum(entry['search_failed'].values())}")
        if entry["detector_failed"]:
            kinds = ", ".join(f"{k} {v}" for k, v in entry["detector_failed"].items())
            removed = (
                f", search results removed by fail-closed {entry['results_removed']}"
                if entry["detector_fail_action"] == "drop"
                else ", results kept (LEAK_DETECTOR_FAIL_ACTION=keep)"
            )
            failed = sum(entry["detector_failed"].values())
            parts.append(f"failed detector verdicts {failed} ({kinds}){removed}")
        # Errored samples are not repeated here: the tables' counts show them (summary.json has them).
        if parts:
            notes.append(f"Call failures, {shown.get(slug, slug)}: " + "; ".join(parts) + ".")
    return notes
