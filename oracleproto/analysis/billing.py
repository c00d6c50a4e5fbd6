"""What a model's run was billed for, read from the stored JSON cells (docs/design/metrics.md, Cost).

Main-LLM calls come from ``step_metrics`` (one entry per billed call: every completed turn, and
the failed call of an errored sample when its final reply reported usage, marked ``error``);
rows without ``step_metrics`` (older runs) fall back to their token columns. Searches and
detector calls come from ``search_calls``: successful Tavily calls cost credits, and each raw
result's ``detector_usage`` item is one billed detector call. Runs written before these keys
existed read as calls without a provider cost.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oracleproto.errors import AnalysisError

#: Tavily credits per search request by ``search_depth`` (basic and the faster depths: 1).
CREDITS_PER_SEARCH = {"advanced": 2}
DEFAULT_CREDITS_PER_SEARCH = 1


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value) if math.isfinite(value) and value >= 0 else 0


def _usd(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


@dataclass(frozen=True)
class Tokens:
    """Prompt, completion and cached-prompt token sums."""

    prompt: int = 0
    completion: int = 0
    cached: int = 0

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            self.prompt + other.prompt, self.completion + other.completion, self.cached + other.cached
        )


@dataclass(frozen=True)
class ChannelBilling:
    """Billed calls of one channel (main LLM or detector) of one model."""

    calls: int = 0
    #: Calls whose provider reported what they cost, and the sum of those costs.
    calls_with_cost: int = 0
    provider_cost_usd: float = 0.0
    #: Tokens of every billed call, and of the calls without a provider cost.
    tokens: Tokens = field(default_factory=Tokens)
    unpriced_tokens: Tokens = field(default_factory=Tokens)
    #: Billed calls that ended in an error (their tokens are included above).
    errored_calls: int = 0

    @classmethod
    def of(cls, records: Iterable[tuple[Mapping[str, Any], bool]]) -> ChannelBilling:
        """Totals of ``(record, errored)`` pairs; a record is a ``Usage.record()`` dict."""
        calls = with_cost = errored = 0
        cost = 0.0
        # Plain int sums of the record keys (``providers.types.Usage.record``): tens of thousands of
        # records per model, and a frozen Tokens per addition was most of the time. The same
        # totals, and the costs added in the same order.
        prompt = completion = cached = 0
        unpriced_prompt = unpriced_completion = unpriced_cached = 0
        for record, failed in records:
            calls += 1
            errored += int(failed)
            p, c = _count(record.get("prompt")), _count(record.get("completion"))
            k = _count(record.get("cached"))
            prompt, completion, cached = prompt + p, completion + c, cached + k
            usd = _usd(record.get("cost_usd"))
            if usd is None:
                unpriced_prompt += p
                unpriced_completion += c
                unpriced_cached += k
            else:
                with_cost += 1
                cost += usd
        tokens = Tokens(prompt, completion, cached)
        unpriced = Tokens(unpriced_prompt, unpriced_completion, unpriced_cached)
        return cls(calls, with_cost, cost, tokens, unpriced, errored)


@dataclass(frozen=True)
class ModelBilling:
    """Everything one virtual model was billed for: main LLM, searches, detector."""

    llm: ChannelBilling = field(default_factory=ChannelBilling)
    detector: ChannelBilling = field(default_factory=ChannelBilling)
    #: Detector verdicts stored without ``detector_usage`` (older runs): priced per call only.
    detector_unrecorded: int = 0
    search_calls: int = 0
    search_credits: int = 0
    #: The leak detector's slug from the run's config snapshot (its price-table entry), if known.
    detector_slug: str | None = None


def _snapshot(run_meta: Mapping[str, Any]) -> dict[str, Any]:
    raw = run_meta.get("config_snapshot")
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _setting(snapshot: dict[str, Any], section: str, name: str, flat: str) -> Any:
    """A value from our sectioned snapshot, else the earlier implementation's flat keys."""
    part = snapshot.get(section)
    if isinstance(part, dict) and name in part:
        return part[name]
    return next((v for k, v in snapshot.items() if isinstance(k, str) and k.lower() == flat), None)


def credits_per_search(run_meta: Mapping[str, Any]) -> int:
    """Tavily credits one search of this run cost: 2 at ``advanced`` depth, else 1 (paper: basic)."""
    depth = _setting(_snapshot(run_meta), "search", "search_depth", "tavily_search_depth")
    return CREDITS_PER_SEARCH.get(str(depth).lower(), DEFAULT_CREDITS_PER_SEARCH)


def detector_slug(run_meta: Mapping[str, Any]) -> str | None:
    """The leak detector's model slug recorded in the config snapshot (None when off or unknown)."""
    snapshot = _snapshot(run_meta)
    slug = snapshot.get("leak_detector_model")
    if slug is None:
        slug = _setting(snapshot, "detector", "model", "leak_detector_model")
    return slug if isinstance(slug, str) and slug else None


def json_cell(db_path: Path, where: str, raw: Any) -> Any:
    """A JSON cell of a run DB parsed (None when NULL or empty); bad JSON names the DB and cell."""
    if raw is None or raw == "":
        return None
    try:
        return json.loads(str(raw))
    except json.JSONDecodeError as exc:
        raise AnalysisError(f"{db_path}: {where} is not valid JSON: {exc}") from exc


def _llm_records(
    db_path: Path, where: str, row: Mapping[str, Any], j: int
) -> list[tuple[dict[str, Any], bool]]:
    steps = json_cell(db_path, f"{where} step_metrics", row.get(f"s{j}_step_metrics"))
    if steps is not None and not isinstance(steps, list):
        raise AnalysisError(f"{db_path}: {where} step_metrics is not a JSON list")
    if steps:
        return [(s, "error" in s) for s in steps if isinstance(s, dict)]
    prompt, completion = _count(row.get(f"s{j}_prompt_tokens")), _count(row.get(f"s{j}_completion_tokens"))
    if not prompt and not completion:
        return []
    # No per-step record (an older run): the token columns, as calls without a provider cost.
    calls = max(1, _count(row.get(f"s{j}_react_steps")))
    first = {"prompt": prompt, "completion": completion}
    return [(first, False)] + [({}, False)] * (calls - 1)


def model_billing(
    db_path: Path, rows: list[dict[str, Any]], n: int, run_meta: Mapping[str, Any], excluded: Iterable[str]
) -> ModelBilling:
    """Billing totals of one model's ``run_results`` rows (``excluded``: the exclusion error values)."""
    skip = frozenset(excluded)
    credits = credits_per_search(run_meta)
    llm: list[tuple[dict[str, Any], bool]] = []
    detector: list[tuple[dict[str, Any], bool]] = []
    unrecorded = searches = 0
    for row in rows:
        for j in range(n):
            if row.get(f"s{j}_created_at") is None or row.get(f"s{j}_error") in skip:
                continue
            where = f"question {row['question_id']!r} sample {j}"
            llm.extend(_llm_records(db_path, where, row, j))
            calls = json_cell(db_path, f"{where} search_calls", row.get(f"s{j}_search_calls")) or []
            for call in calls if isinstance(calls, list) else ():
                if not isinstance(call, dict):
                    continue
                searches += 0 if call.get("error_kind") else 1
                usage = call.get("detector_usage")
                verdicts = call.get("detector_verdicts")
                verdicts = verdicts if isinstance(verdicts, list) else []
                if isinstance(usage, list):
                    labels = verdicts + [None] * (len(usage) - len(verdicts))
                    detector.extend(
                        (u, str(v).startswith("failed:"))
                        for u, v in zip(usage, labels, strict=False)
                        if isinstance(u, dict)
                    )
                else:
                    unrecorded += len(verdicts)
    return ModelBilling(
        llm=ChannelBilling.of(llm),
        detector=ChannelBilling.of(detector),
        detector_unrecorded=unrecorded,
        search_calls=searches,
        search_credits=searches * credits,
        detector_slug=detector_slug(run_meta),
    )
