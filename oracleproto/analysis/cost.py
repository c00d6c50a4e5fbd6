"""Cost as the paper reports it: the provider's invoice, else a price-table estimate (Eq. per-correct).

Per channel (main LLM, detector) the billed calls of ``billing.ModelBilling`` are priced with what
the provider reported when every call carries a cost (``provider``); with a price-table estimate
of their tokens when none does (``price table``); with both, each call by its own source, when
only some do (``mixed``); and not at all without a price (``n/a``). Searches cost Tavily credits
(1 per basic search, 2 per advanced) at a USD price per credit, or a legacy price per call.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from oracleproto.analysis.billing import ChannelBilling, ModelBilling, Tokens
from oracleproto.analysis.exact import numpy_reductions
from oracleproto.analysis.prices import PriceTable, TokenPrice, load_prices
from oracleproto.analysis.trials import TrialTable

SOURCE_PROVIDER = "provider"
SOURCE_PRICE_TABLE = "price table"
SOURCE_MIXED = "mixed"
SOURCE_NONE = "n/a"

__all__ = [
    "SOURCE_MIXED",
    "SOURCE_NONE",
    "SOURCE_PRICE_TABLE",
    "SOURCE_PROVIDER",
    "ChannelCost",
    "CostSummary",
    "PriceTable",
    "TokenPrice",
    "channel_cost",
    "eval_questions",
    "load_prices",
    "model_cost",
    "per_correct_cost",
]


@dataclass(frozen=True)
class ChannelCost:
    """USD of one channel's billed calls and where the number comes from."""

    usd: float | None
    source: str
    #: Every billed token at the price table (for comparison with the invoice); None without a price.
    price_table_usd: float | None = None


def _estimate(tokens: Tokens, price: TokenPrice | None) -> float | None:
    return None if price is None else price.usd(tokens.prompt, tokens.completion, tokens.cached)


def channel_cost(
    billing: ChannelBilling, price: TokenPrice | None, usd_per_call: float | None = None
) -> ChannelCost:
    """Price one channel: provider costs, a token price (else a per-call price) for the rest."""
    reference = _estimate(billing.tokens, price)
    unpriced_calls = billing.calls - billing.calls_with_cost
    if billing.calls == 0:
        return ChannelCost(0.0, SOURCE_NONE, reference)
    if unpriced_calls == 0:
        return ChannelCost(billing.provider_cost_usd, SOURCE_PROVIDER, reference)
    rest = _estimate(billing.unpriced_tokens, price)
    if rest is None and usd_per_call is not None:
        rest = unpriced_calls * usd_per_call
    if rest is None:
        return ChannelCost(None, SOURCE_NONE, reference)
    source = SOURCE_MIXED if billing.calls_with_cost else SOURCE_PRICE_TABLE
    return ChannelCost(billing.provider_cost_usd + rest, source, reference)


def _detector_cost(billing: ModelBilling, prices: PriceTable | None) -> ChannelCost:
    price = prices.models.get(billing.detector_slug) if prices and billing.detector_slug else None
    per_call = prices.detector_usd_per_call if prices else None
    recorded = channel_cost(billing.detector, price, per_call)
    if not billing.detector_unrecorded:
        return recorded
    # Verdicts stored without usage (older runs) can only be priced per call.
    legacy = None if per_call is None else billing.detector_unrecorded * per_call
    if billing.detector.calls == 0:
        return ChannelCost(legacy, SOURCE_PRICE_TABLE if legacy is not None else SOURCE_NONE)
    total = None if legacy is None or recorded.usd is None else recorded.usd + legacy
    mixed = recorded.source != SOURCE_PRICE_TABLE
    return ChannelCost(total, SOURCE_NONE if total is None else SOURCE_MIXED if mixed else SOURCE_PRICE_TABLE)


def _search_usd(billing: ModelBilling, prices: PriceTable | None) -> float | None:
    if not billing.search_calls:
        return 0.0
    if prices is not None and prices.search_usd_per_credit is not None:
        return billing.search_credits * prices.search_usd_per_credit
    if prices is not None and prices.search_usd_per_call is not None:
        return billing.search_calls * prices.search_usd_per_call
    return None


@dataclass(frozen=True)
class CostSummary:
    """One model's cost: main LLM (Table 3's total), search and detector, and their sum."""

    llm: ChannelCost
    search_usd: float | None
    detector: ChannelCost

    @property
    def model_cost_usd(self) -> float | None:
        """The main model's cost alone: the paper's Table 3 total (the model invoice)."""
        return None if self.llm.source == SOURCE_NONE else self.llm.usd

    @property
    def total_cost_usd(self) -> float | None:
        """Model + search + detector; None when any part that was used has no price."""
        parts = (self.model_cost_usd, self.search_usd, self.detector.usd)
        if any(p is None for p in parts):
            return None
        known = [p for p in parts if p is not None]
        # The builtin sum of floats rounds differently from Python 3.12 on; fsum is exactly rounded.
        return sum(known) if numpy_reductions() else math.fsum(known)


def model_cost(billing: ModelBilling, real_slug: str, prices: PriceTable | None) -> CostSummary:
    """Price one model's billed calls (see the module docstring for the sources)."""
    price = prices.models.get(real_slug) if prices else None
    return CostSummary(
        channel_cost(billing.llm, price), _search_usd(billing, prices), _detector_cost(billing, prices)
    )


def _channel_detail(billing: ChannelBilling, cost: ChannelCost) -> dict[str, Any]:
    return {
        "source": cost.source,
        "usd": cost.usd,
        "price_table_usd": cost.price_table_usd,
        "calls": billing.calls,
        "calls_with_provider_cost": billing.calls_with_cost,
        "provider_cost_usd": billing.provider_cost_usd,
        "errored_calls": billing.errored_calls,
        "prompt_tokens": billing.tokens.prompt,
        "completion_tokens": billing.tokens.completion,
        "cached_tokens": billing.tokens.cached,
    }


def cost_detail(billing: ModelBilling, cost: CostSummary, prices: PriceTable | None) -> dict[str, Any]:
    """The ``cost_detail`` object of ``summary.json`` (docs/design/metrics.md, Outputs)."""
    detector = _channel_detail(billing.detector, cost.detector)
    detector.update(slug=billing.detector_slug, unrecorded_calls=billing.detector_unrecorded)
    return {
        "llm": _channel_detail(billing.llm, cost.llm),
        "search": {
            "usd": cost.search_usd,
            "calls": billing.search_calls,
            "credits": billing.search_credits,
            "usd_per_credit": prices.search_usd_per_credit if prices else None,
            "usd_per_call": prices.search_usd_per_call if prices else None,
        },
        "detector": detector,
    }


def per_correct_cost(
    total_usd: float | None, n_questions: int, n: int, composite: float | None
) -> float | None:
    """Eq. (per-correct): C_total / (|D_eval| · n · composite); None when undefined."""
    if total_usd is None or composite is None or composite <= 0 or n_questions == 0:
        return None
    return total_usd / (n_questions * n * composite)


def eval_questions(t: TrialTable) -> int:
    """|D_eval|: questions with at least one populated, non-excluded trial."""
    return int(np.asarray(t.eligible.any(axis=1)).sum())


def cost_entry(
    billing: ModelBilling,
    real_slug: str,
    prices: PriceTable | None,
    *,
    n_eval: int,
    n: int,
    composite: float | None,
) -> dict[str, Any]:
    """The cost keys of a model's ``summary.json`` entry (Table 3 reads them)."""
    cost = model_cost(billing, real_slug, prices)
    return {
        "total_cost_usd": cost.model_cost_usd,
        "cost_source": cost.llm.source,
        "per_correct_cost_usd": per_correct_cost(cost.model_cost_usd, n_eval, n, composite),
        "total_cost_with_tools_usd": cost.total_cost_usd,
        "per_correct_cost_with_tools_usd": per_correct_cost(cost.total_cost_usd, n_eval, n, composite),
        "cost_detail": cost_detail(billing, cost, prices),
    }


def cost_notes(slug: str, real_slug: str, entry: dict[str, Any], prices: PriceTable | None) -> list[str]:
    """Why a model's cost cells are empty, when a price would fill them."""
    notes: list[str] = []
    detail = entry["cost_detail"]
    llm = detail["llm"]
    if entry["total_cost_usd"] is None and llm["calls"]:
        if llm["calls_with_provider_cost"]:
            notes.append(
                f"{slug}: the provider reported the cost of {llm['calls_with_provider_cost']} of "
                f"{llm['calls']} calls; give {real_slug!r} token prices (--prices) to estimate the rest"
            )
        elif prices is not None and prices.models:
            notes.append(f"no price for model {real_slug!r}: its cost columns are empty")
    priced = prices is not None and (
        prices.models or prices.search_usd_per_credit is not None or prices.search_usd_per_call is not None
    )
    if priced and entry["total_cost_usd"] is not None and entry["total_cost_with_tools_usd"] is None:
        missing = "search (usd_per_credit)" if detail["search"]["usd"] is None else "detector"
        notes.append(f"{slug}: no {missing} price: cost with tools is empty")
    return notes


NO_COST_NOTE = (
    "no cost plot (cost_vs_composite): no model has both a total cost and a composite accuracy "
    "(the provider reported no cost; pass --prices to estimate one)"
)


def cost_points(models: dict[str, dict[str, Any]], order: tuple[str, ...]) -> list[tuple[str, float, float]]:
    """(slug, total cost, composite accuracy) of every model that has both, in plan order."""
    return [
        (slug, float(e["total_cost_usd"]), float(e["composite_accuracy"]))
        for slug, e in ((s, models[s]) for s in order)
        if e.get("total_cost_usd") is not None and e.get("composite_accuracy") is not None
    ]
