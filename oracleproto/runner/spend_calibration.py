"""Measured averages of an earlier (pilot) run, for ``plan --calibrate RUN`` (docs/design/architecture.md).

Reads the pilot's stores only (``analysis/reader.read_run``, then its per-model DBs opened
read-only for the per-step prompts and per-search result counts) and derives, per real model
and pooled over the pilot's models: LLM calls and ReAct steps per sample, searches per sample,
raw results and detector verdicts per search, a linear fit of prompt tokens against the step
index, completion tokens per call (reasoning is part of completion in OpenAI usage), detector
tokens per verdict, and the provider-reported cost per call where ``usage.cost`` was recorded.
"""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oracleproto.analysis.billing import json_cell
from oracleproto.errors import AnalysisError
from oracleproto.primitives.sqlite_readonly import connect_readonly

if TYPE_CHECKING:
    from oracleproto.analysis.reader import ModelRun


@dataclass
class _Sums:
    """Raw totals of one model (or of the pool): averages are taken once, at the end."""

    samples: int = 0
    llm_calls: int = 0
    prompt: int = 0
    react_steps: int = 0
    #: Σ over samples of m(m − 1)/2 for m calls: the step-index sum the prompt growth multiplies.
    step_index_sum: float = 0.0
    searches: int = 0
    raw_results: int = 0
    verdicts: int = 0
    completion: int = 0
    detector_calls: int = 0
    detector_prompt: int = 0
    detector_completion: int = 0
    llm_cost_calls: int = 0
    llm_cost_usd: float = 0.0
    detector_cost_calls: int = 0
    detector_cost_usd: float = 0.0
    #: (step index, prompt tokens) of every billed main-LLM call: the growth fit's points.
    points: list[tuple[int, int]] = field(default_factory=list)

    def add(self, other: _Sums) -> None:
        """Add ``other``'s totals to these."""
        for name, value in vars(other).items():
            if name == "points":
                self.points.extend(value)
            else:
                setattr(self, name, getattr(self, name) + value)


@dataclass(frozen=True)
class Measured:
    """Averages of one model (or of the pool) in the pilot run."""

    samples: int
    llm_calls_per_sample: float
    react_steps_per_sample: float
    #: Mean over samples of m(m − 1)/2 (m: LLM calls of the sample).
    step_index_sum_per_sample: float
    searches_per_sample: float
    results_per_search: float | None
    verdicts_per_search: float | None
    #: Prompt tokens of the call at step k ≈ first + growth · k (least squares over every call).
    prompt_tokens_first_step: float
    prompt_growth_per_step: float
    completion_tokens_per_call: float
    detector_prompt_tokens_per_verdict: float | None
    detector_completion_tokens_per_verdict: float | None
    #: Mean provider-reported USD per call over the calls that reported one (None: none did).
    llm_usd_per_call: float | None
    detector_usd_per_verdict: float | None

    def prompt_tokens_per_sample(self) -> float:
        """Σ over a sample's calls of first + growth · k, using the pilot's call-count mix."""
        return (
            self.llm_calls_per_sample * self.prompt_tokens_first_step
            + self.step_index_sum_per_sample * self.prompt_growth_per_step
        )


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _fit(points: list[tuple[int, int]]) -> tuple[float, float]:
    """Intercept and slope of prompt tokens on the step index (slope 0 without two distinct steps)."""
    if not points:
        return 0.0, 0.0
    n = len(points)
    mean_k = sum(k for k, _ in points) / n
    mean_p = sum(p for _, p in points) / n
    var = sum((k - mean_k) ** 2 for k, _ in points)
    if var == 0:
        return mean_p, 0.0
    slope = sum((k - mean_k) * (p - mean_p) for k, p in points) / var
    # With an intercept the fitted values sum to the measured ones: the pilot is reproduced exactly.
    return mean_p - slope * mean_k, slope


def _measured(s: _Sums) -> Measured:
    first, growth = _fit(s.points)
    if len(s.points) != s.llm_calls:
        # Rows without step_metrics (older runs) have no per-step prompts: a flat mean per call.
        first, growth = _ratio(s.prompt, s.llm_calls) or 0.0, 0.0
    samples = s.samples
    return Measured(
        samples=samples,
        llm_calls_per_sample=s.llm_calls / samples,
        react_steps_per_sample=s.react_steps / samples,
        step_index_sum_per_sample=s.step_index_sum / samples,
        searches_per_sample=s.searches / samples,
        results_per_search=_ratio(s.raw_results, s.searches),
        verdicts_per_search=_ratio(s.verdicts, s.searches),
        prompt_tokens_first_step=first,
        prompt_growth_per_step=growth,
        completion_tokens_per_call=_ratio(s.completion, s.llm_calls) or 0.0,
        detector_prompt_tokens_per_verdict=_ratio(s.detector_prompt, s.detector_calls),
        detector_completion_tokens_per_verdict=_ratio(s.detector_completion, s.detector_calls),
        llm_usd_per_call=_ratio(s.llm_cost_usd, s.llm_cost_calls),
        detector_usd_per_verdict=_ratio(s.detector_cost_usd, s.detector_cost_calls),
    )


@dataclass(frozen=True)
class Calibration:
    """What ``--calibrate RUN`` measured: per real model, and pooled over the pilot's models."""

    run_dir: str
    run_id: str
    samples: int
    models: dict[str, Measured]
    pooled: Measured

    def for_model(self, real_model: str) -> tuple[Measured, bool]:
        """The model's own averages (True), else the pooled ones (False)."""
        own = self.models.get(real_model)
        return (own, True) if own is not None else (self.pooled, False)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready document (the plan's ``calibration`` key)."""
        return {
            "run_dir": self.run_dir,
            "run_id": self.run_id,
            "samples": self.samples,
            "models": {slug: asdict(m) for slug, m in sorted(self.models.items())},
            "pooled": asdict(self.pooled),
        }


def _steps(db_path: Path, where: str, raw: Any) -> list[dict[str, Any]]:
    steps = json_cell(db_path, f"{where} step_metrics", raw)
    if steps is not None and not isinstance(steps, list):
        raise AnalysisError(f"{db_path}: {where} step_metrics is not a JSON list")
    return [s for s in steps or () if isinstance(s, dict)]


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _model_sums(run_dir: Path, model: ModelRun, n: int) -> _Sums:
    """The totals of one virtual model: billing from the reader, per-step points from its DB."""
    from oracleproto.analysis.reader import EXCLUSION_ERRORS

    db_path = run_dir / "db" / model.file
    cols = ", ".join(
        f'"s{j}_{f}"'
        for j in range(n)
        for f in ("created_at", "error", "step_metrics", "search_calls", "react_steps")
    )
    try:
        con = connect_readonly(db_path)
        try:
            con.row_factory = sqlite3.Row
            rows = [dict(r) for r in con.execute(f"SELECT question_id, {cols} FROM run_results")]
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise AnalysisError(f"{db_path}: cannot read step_metrics/search_calls: {exc}") from exc
    sums = _Sums()
    for row in rows:
        for j in range(n):
            if row[f"s{j}_created_at"] is None or row[f"s{j}_error"] in EXCLUSION_ERRORS:
                continue
            where = f"question {row['question_id']!r} sample {j}"
            sums.samples += 1
            sums.react_steps += _count(row[f"s{j}_react_steps"])
            steps = _steps(db_path, where, row[f"s{j}_step_metrics"])
            sums.step_index_sum += len(steps) * (len(steps) - 1) / 2
            sums.points += [(k, _count(s.get("prompt"))) for k, s in enumerate(steps)]
            calls = json_cell(db_path, f"{where} search_calls", row[f"s{j}_search_calls"]) or []
            for call in calls if isinstance(calls, list) else ():
                if isinstance(call, dict) and not call.get("error_kind"):
                    verdicts = call.get("detector_verdicts")
                    raw = call.get("n_results_raw", call.get("n_results"))
                    sums.raw_results += _count(raw)
                    sums.verdicts += len(verdicts) if isinstance(verdicts, list) else 0
    bill = model.billing
    # Older rows without step_metrics: their calls count (billing's fallback) but add no fit point.
    sums.llm_calls = bill.llm.calls
    sums.prompt = bill.llm.tokens.prompt
    sums.completion = bill.llm.tokens.completion
    sums.searches = bill.search_calls
    sums.detector_calls = bill.detector.calls
    sums.detector_prompt = bill.detector.tokens.prompt
    sums.detector_completion = bill.detector.tokens.completion
    sums.llm_cost_calls, sums.llm_cost_usd = bill.llm.calls_with_cost, bill.llm.provider_cost_usd
    sums.detector_cost_calls = bill.detector.calls_with_cost
    sums.detector_cost_usd = bill.detector.provider_cost_usd
    return sums


def load_calibration(run_dir: Path) -> Calibration:
    """Measure the pilot run at ``run_dir`` (read-only); AnalysisError when it is not a usable run."""
    # The reader (numpy) loads when a pilot is measured, not with every command that plans a run.
    from oracleproto.analysis.reader import read_run

    data = read_run(run_dir)
    n = int(data.manifest.get("sampling_n") or 0)
    per_model: dict[str, _Sums] = {}
    pooled = _Sums()
    for model in data.models:
        model_n = int(model.run_meta.get("sampling_n") or n)
        sums = _model_sums(data.run_dir, model, model_n)
        per_model.setdefault(model.real_slug, _Sums()).add(sums)
        pooled.add(sums)
    if pooled.samples == 0:
        raise AnalysisError(
            f"{run_dir}: run {data.run_id} has no finished sample to calibrate from; "
            "finish (resume) the pilot run first, or pass another run"
        )
    return Calibration(
        run_dir=data.run_dir.name,
        run_id=data.run_id,
        samples=pooled.samples,
        models={slug: _measured(s) for slug, s in per_model.items() if s.samples},
        pooled=_measured(pooled),
    )
