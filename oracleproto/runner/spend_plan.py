"""What a run will ask and may cost, before it runs: ``oracleproto plan`` and ``run --dry-run``.

Pure apart from reading the source DB and the price file: admission (``runner/plan.py``), the
rendered prompts and the step and search budgets give, per grid cell, the samples, the calls per
channel (LLM, search, detector) and the tokens, each as an expected value and an upper bound, and a
price table turns them into USD. No network call, no run directory. The assumptions are stated
with every plan (``ASSUMPTIONS``), because an estimate without them is not worth reading.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from oracleproto.analysis.prices import PriceTable, TokenPrice
from oracleproto.prompts import render_prompt
from oracleproto.providers.detector_template import DetectorTemplate
from oracleproto.providers.types import SearchResult
from oracleproto.runner.identity import RunIdentity, resolve_identity
from oracleproto.runner.plan import CellPlan, RunPlan, plan_for_settings
from oracleproto.runner.profile_checks import check_profile_settings
from oracleproto.runner.run_texts import load_run_texts, outcome_lines, with_protocol_switches
from oracleproto.runner.spend_calibration import Calibration, Measured
from oracleproto.settings.model import Settings

#: Characters per token for text we have not sent yet (English prose and JSON; no tokenizer).
CHARS_PER_TOKEN = 4.0
#: Expected completion tokens of one main-LLM step (reasoning included); the bound is LLM_MAX_TOKENS.
EXPECTED_COMPLETION_TOKENS = 600
#: Expected completion tokens of one detector verdict (one line of JSON); the bound is its max_tokens.
EXPECTED_DETECTOR_COMPLETION_TOKENS = 40
#: Share of SEARCH_RESULT_MAX_CHARS an average result body fills (the bound fills it whole).
EXPECTED_RESULT_FILL = 0.5
#: Characters a result adds besides its body (title, URL, date, JSON keys).
RESULT_OVERHEAD_CHARS = 300
#: Tavily credits per search: 1 basic, 2 advanced.
CREDITS = {"basic": 1, "advanced": 2}

ASSUMPTIONS = (
    f"tokens ≈ characters / {CHARS_PER_TOKEN:g} (no tokenizer; prompts are rendered exactly)",
    "expected: each sample uses its whole search budget C (one search per step, capped at T − 1), "
    f"then answers; each step writes {EXPECTED_COMPLETION_TOKENS} tokens; a result fills "
    f"{EXPECTED_RESULT_FILL:.0%} of SEARCH_RESULT_MAX_CHARS; a verdict is "
    f"{EXPECTED_DETECTOR_COMPLETION_TOKENS} tokens",
    "upper bound: every sample runs all T steps (plus the final-answer retry when on), each step "
    "writes LLM_MAX_TOKENS, C searches return R full-length results, each verdict writes its max tokens",
    "every prompt token is priced as fresh input (no cache discount), retries are not counted",
)


def calibrated_assumptions(calibration: Calibration, pooled_for: list[str]) -> tuple[str, ...]:
    """The assumptions of a plan whose expected values come from ``calibration`` (what remains)."""
    pooled = (
        f"{', '.join(pooled_for)}: not in the pilot, so the pilot's pooled averages, priced from the table"
        if pooled_for
        else "every planned model was measured in the pilot"
    )
    return (
        f"expected: calibrated from run {calibration.run_id} ({calibration.samples} samples measured): per "
        "model its LLM calls, searches and detector verdicts per sample, prompt tokens as first step + "
        "growth per step, completion (with reasoning) tokens per call, detector tokens per verdict, and "
        "the provider-reported USD per call where usage.cost was recorded (else the price table)",
        "remaining: the planned questions' prompts are as long on average as the pilot's; the pilot's "
        "averages hold for this plan's grid and settings (capped at T, C and R)",
        pooled,
        f"upper bound (uncalibrated): tokens ≈ characters / {CHARS_PER_TOKEN:g}; every sample runs all T "
        "steps (plus the final-answer retry when on), each step writes LLM_MAX_TOKENS, C searches return "
        "R full-length results, each verdict writes its max tokens",
        "retries are not counted; prompt tokens without a recorded cost are priced as fresh input",
    )


@dataclass(frozen=True)
class Bound:
    """An expected value and an upper bound."""

    expected: float
    upper: float

    def __add__(self, other: Bound) -> Bound:
        return Bound(self.expected + other.expected, self.upper + other.upper)

    def scaled(self, factor: float) -> Bound:
        """Both values times ``factor``."""
        return Bound(self.expected * factor, self.upper * factor)


ZERO = Bound(0.0, 0.0)


@dataclass(frozen=True)
class Exclusion:
    """Questions a real model may not be asked, for one reason."""

    model: str
    reason: str
    training_cutoff: str
    question_ids: tuple[str, ...]


@dataclass
class CellEstimate:
    """One grid cell's work and cost."""

    model: str
    real_model: str
    questions: int
    admitted: int
    samples: int
    llm_calls: Bound = ZERO
    search_calls: Bound = ZERO
    detector_calls: Bound = ZERO
    llm_prompt_tokens: Bound = ZERO
    llm_completion_tokens: Bound = ZERO
    detector_prompt_tokens: Bound = ZERO
    detector_completion_tokens: Bound = ZERO
    #: USD per channel (``None``: the price table has no price for it).
    usd: dict[str, Bound | None] = field(default_factory=dict)

    def total_usd(self) -> Bound | None:
        """The cell's USD over every priced channel (None when nothing is priced)."""
        priced = [b for b in self.usd.values() if b is not None]
        if not priced:
            return None
        total = ZERO
        for bound in priced:
            total = total + bound
        return total


@dataclass
class SpendPlan:
    """The whole plan: cells, exclusions, what was priced, and the assumptions."""

    source_db: str
    question_count: int
    question_limit: int | None
    sampling_n: int
    r_list: list[int]
    c_list: list[int]
    detector: str | None
    cells: list[CellEstimate]
    exclusions: list[Exclusion]
    prices: str | None
    unpriced: list[str]
    assumptions: tuple[str, ...] = ASSUMPTIONS
    #: ``--calibrate RUN``: the pilot's measured averages and which planned models used the pool.
    calibration: dict[str, Any] | None = None
    #: ``{"name", "fingerprint"}`` of the harness profile the run would send its bytes in.
    harness_profile: dict[str, str] | None = None

    def total(self, name: str) -> Bound:
        """The sum of one ``CellEstimate`` bound over the cells."""
        total = ZERO
        for cell in self.cells:
            total = total + getattr(cell, name)
        return total

    def total_usd(self) -> Bound | None:
        """USD over every cell (None when nothing is priced)."""
        bounds = [b for cell in self.cells if (b := cell.total_usd()) is not None]
        if not bounds:
            return None
        total = ZERO
        for bound in bounds:
            total = total + bound
        return total

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready document (``plan --json``)."""
        data = asdict(self)
        data["assumptions"] = list(self.assumptions)
        total = self.total_usd()
        data["total_usd"] = None if total is None else asdict(total)
        return data


def _tokens(chars: float) -> float:
    return chars / CHARS_PER_TOKEN


def _detector_base_chars(template: DetectorTemplate) -> int:
    empty = SearchResult(title="", url="", content="", raw_content="", published_date=None)
    return len(template.render(empty, date(2000, 1, 1)))


def _cell_estimate(
    cell: CellPlan,
    identity: RunIdentity,
    settings: Settings,
    detector_chars: int,
    measured: Measured | None = None,
) -> CellEstimate:
    """Calls and tokens of one cell (expected and upper bound), summed over its admitted samples."""
    n = settings.run.sampling_n
    steps = settings.react.max_steps
    c, r = cell.cell.max_search_calls, cell.cell.results_per_search
    protocols = identity.protocols.with_search_calls(c)
    tools_chars = len(json.dumps(identity.profile.llm_request.tool_schema)) if c > 0 else 0
    lines = outcome_lines(identity.profile)
    body_max = settings.search.result_max_chars
    result_chars = Bound(
        r * (RESULT_OVERHEAD_CHARS + EXPECTED_RESULT_FILL * body_max), r * (RESULT_OVERHEAD_CHARS + body_max)
    )
    searches = Bound(min(c, steps - 1), c)
    llm_calls = Bound(searches.expected + 1, steps + (1 if settings.react.final_answer_retry else 0))
    estimate = CellEstimate(
        model=cell.cell.virtual_slug,
        real_model=cell.cell.real_model,
        questions=len(cell.questions),
        admitted=len(cell.admitted),
        samples=len(cell.admitted) * n,
    )
    for qp in cell.admitted:
        prompt = render_prompt(qp.question, identity.templates, protocols=protocols, lines=lines)
        base = len(prompt) + tools_chars
        expected_in = sum(
            base
            + k * EXPECTED_COMPLETION_TOKENS * CHARS_PER_TOKEN
            + min(k, int(searches.expected)) * result_chars.expected
            for k in range(int(llm_calls.expected))
        )
        upper_in = sum(
            base + k * settings.llm.max_tokens * CHARS_PER_TOKEN + min(k, c) * result_chars.upper
            for k in range(int(llm_calls.upper))
        )
        estimate.llm_prompt_tokens = estimate.llm_prompt_tokens + Bound(
            _tokens(expected_in), _tokens(upper_in)
        ).scaled(n)
    estimate.llm_calls = llm_calls.scaled(estimate.samples)
    estimate.llm_completion_tokens = Bound(
        llm_calls.expected * EXPECTED_COMPLETION_TOKENS, llm_calls.upper * settings.llm.max_tokens
    ).scaled(estimate.samples)
    estimate.search_calls = searches.scaled(estimate.samples)
    if settings.detector.enabled:
        estimate.detector_calls = estimate.search_calls.scaled(r)
        # The detector reads one result: its template, the snippet and the (cut) page body.
        per_verdict = Bound(
            _tokens(detector_chars + RESULT_OVERHEAD_CHARS + 2 * EXPECTED_RESULT_FILL * body_max),
            _tokens(detector_chars + RESULT_OVERHEAD_CHARS + 2 * body_max),
        )
        estimate.detector_prompt_tokens = Bound(
            estimate.detector_calls.expected * per_verdict.expected,
            estimate.detector_calls.upper * per_verdict.upper,
        )
        estimate.detector_completion_tokens = Bound(
            estimate.detector_calls.expected * EXPECTED_DETECTOR_COMPLETION_TOKENS,
            estimate.detector_calls.upper * settings.detector.max_tokens,
        )
    if measured is not None:
        _calibrate(estimate, measured, settings, r=r, c=c, llm_upper=llm_calls.upper, per_verdict=per_verdict)
    return estimate


def _calibrate(
    estimate: CellEstimate,
    m: Measured,
    settings: Settings,
    *,
    r: int,
    c: int,
    llm_upper: float,
    per_verdict: Bound,
) -> None:
    """Replace the expected values with the pilot's averages (capped at the budgets); bounds stay."""
    samples = estimate.samples
    calls = min(m.llm_calls_per_sample, llm_upper)
    # A pilot average above this plan's budget is capped; the prompt total shrinks with the calls.
    prompt = m.prompt_tokens_per_sample() * (
        calls / m.llm_calls_per_sample if m.llm_calls_per_sample else 0.0
    )
    searches = min(m.searches_per_sample, c)
    per_search = m.verdicts_per_search if m.verdicts_per_search is not None else m.results_per_search
    verdicts = min(r if per_search is None else per_search, r)

    def expected(bound: Bound, value: float) -> Bound:
        return Bound(value, bound.upper)

    estimate.llm_calls = expected(estimate.llm_calls, calls * samples)
    estimate.llm_prompt_tokens = expected(estimate.llm_prompt_tokens, prompt * samples)
    estimate.llm_completion_tokens = expected(
        estimate.llm_completion_tokens, calls * m.completion_tokens_per_call * samples
    )
    estimate.search_calls = expected(estimate.search_calls, searches * samples)
    if not settings.detector.enabled:
        return
    judged = searches * verdicts * samples
    det_prompt = m.detector_prompt_tokens_per_verdict
    det_completion = m.detector_completion_tokens_per_verdict
    estimate.detector_calls = expected(estimate.detector_calls, judged)
    estimate.detector_prompt_tokens = expected(
        estimate.detector_prompt_tokens, judged * (per_verdict.expected if det_prompt is None else det_prompt)
    )
    estimate.detector_completion_tokens = expected(
        estimate.detector_completion_tokens,
        judged * (EXPECTED_DETECTOR_COMPLETION_TOKENS if det_completion is None else det_completion),
    )


def _recorded_usd(cell: CellEstimate, m: Measured, own: bool) -> None:
    """Expected USD from the pilot's provider-reported cost per call, where the table prices the channel.

    The LLM's only from the model's own calls (another model's price says nothing); the detector's
    also from the pool (one detector judges every model's results).
    """
    llm = cell.usd.get("llm")
    if own and llm is not None and m.llm_usd_per_call is not None:
        cell.usd["llm"] = Bound(cell.llm_calls.expected * m.llm_usd_per_call, llm.upper)
    detector = cell.usd.get("detector")
    if detector is not None and cell.detector_calls.upper > 0 and m.detector_usd_per_verdict is not None:
        cell.usd["detector"] = Bound(
            cell.detector_calls.expected * m.detector_usd_per_verdict, detector.upper
        )


def _token_usd(price: TokenPrice, prompt: Bound, completion: Bound) -> Bound:
    return Bound(
        price.usd(round(prompt.expected), round(completion.expected), 0),
        price.usd(round(prompt.upper), round(completion.upper), 0),
    )


def _price(cell: CellEstimate, settings: Settings, prices: PriceTable | None, unpriced: set[str]) -> None:
    """Fill ``cell.usd`` per channel; what the table cannot price goes to ``unpriced``."""
    model_price = prices.models.get(cell.real_model) if prices else None
    if model_price is None:
        unpriced.add(f"{cell.real_model} (no token prices)")
    cell.usd["llm"] = (
        None
        if model_price is None
        else _token_usd(model_price, cell.llm_prompt_tokens, cell.llm_completion_tokens)
    )
    credit = prices.search_usd_per_credit if prices else None
    credit = settings.analysis.tavily_usd_per_credit if credit is None else credit
    per_call = prices.search_usd_per_call if prices else None
    if cell.search_calls.upper == 0:
        cell.usd["search"] = ZERO
    elif credit is not None:
        cell.usd["search"] = cell.search_calls.scaled(credit * CREDITS[settings.search.search_depth])
    elif per_call is not None:
        cell.usd["search"] = cell.search_calls.scaled(per_call)
    else:
        cell.usd["search"] = None
        unpriced.add("search (usd_per_credit or TAVILY_USD_PER_CREDIT)")
    if cell.detector_calls.upper == 0:
        cell.usd["detector"] = ZERO
        return
    detector_price = prices.models.get(settings.detector.model or "") if prices else None
    if detector_price is not None:
        cell.usd["detector"] = _token_usd(
            detector_price, cell.detector_prompt_tokens, cell.detector_completion_tokens
        )
    elif prices is not None and prices.detector_usd_per_call is not None:
        cell.usd["detector"] = cell.detector_calls.scaled(prices.detector_usd_per_call)
    else:
        cell.usd["detector"] = None
        named = settings.detector.model or "(LEAK_DETECTOR_MODEL not set)"
        unpriced.add(f"detector {named} (no token prices, no detector.usd_per_call)")


def _exclusions(plan: RunPlan) -> list[Exclusion]:
    out: list[Exclusion] = []
    seen: set[str] = set()
    for cell in plan.cells:
        if cell.cell.real_model in seen:
            continue  # every cell of a model has the same admission
        seen.add(cell.cell.real_model)
        reasons: dict[str, list[str]] = {}
        for qp in cell.excluded:
            reasons.setdefault(str(qp.admission.reason), []).append(qp.question.id)
        for reason, ids in sorted(reasons.items()):
            out.append(Exclusion(cell.cell.real_model, reason, cell.training_cutoff.isoformat(), tuple(ids)))
    return out


def build_spend_plan(
    settings: Settings,
    source_db: Path,
    *,
    prices: PriceTable | None,
    prices_name: str | None = None,
    calibration: Calibration | None = None,
) -> SpendPlan:
    """The plan of a run with ``settings`` over ``source_db``: reads files only, no network.

    With ``calibration`` (a pilot run's averages) the expected values are the pilot's; the upper
    bounds are the budgets' either way.
    """
    settings.validate_static()
    texts = load_run_texts(settings)
    check_profile_settings(texts.profile, settings)
    settings = with_protocol_switches(settings, texts)
    identity = resolve_identity(settings, source_db, texts=texts)
    plan = plan_for_settings(identity.questions, settings, identity.training_cutoffs)
    detector_chars = _detector_base_chars(texts.detector) if settings.detector.enabled else 0
    unpriced: set[str] = set()
    cells = []
    pooled_for: list[str] = []
    for cell in plan.cells:
        measured, own = calibration.for_model(cell.cell.real_model) if calibration else (None, False)
        if calibration is not None and not own and cell.cell.real_model not in pooled_for:
            pooled_for.append(cell.cell.real_model)
        estimate = _cell_estimate(cell, identity, settings, detector_chars, measured)
        _price(estimate, settings, prices, unpriced)
        if measured is not None:
            _recorded_usd(estimate, measured, own)
        cells.append(estimate)
    return SpendPlan(
        source_db=source_db.name,
        question_count=len(identity.questions),
        question_limit=settings.run.question_limit,
        sampling_n=settings.run.sampling_n,
        r_list=list(settings.run.grid_r_list),
        c_list=list(settings.run.grid_c_list),
        # "" when the filter is on without a model (a live run refuses that; the plan still counts it)
        detector=(settings.detector.model or "") if settings.detector.enabled else None,
        cells=cells,
        exclusions=_exclusions(plan),
        prices=prices_name,
        unpriced=sorted(unpriced),
        assumptions=ASSUMPTIONS if calibration is None else calibrated_assumptions(calibration, pooled_for),
        calibration=None if calibration is None else {**calibration.to_json(), "pooled_for": pooled_for},
        harness_profile={"name": texts.profile.name, "fingerprint": texts.fingerprint},
    )
