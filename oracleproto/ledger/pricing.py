"""What one live call may cost before it is sent (its bound), and what it cost once answered.

The bound of a chat call (main LLM or detector) prices its request body's length in bytes as
prompt tokens and its ``max_tokens`` (or ``max_completion_tokens``) as completion tokens at the
price table's rates. A byte-level tokenizer makes at most one token per byte of text, and the JSON
body is longer than the text it carries, so the bound holds whenever the provider honours the
completion cap and charges no more than the table says. A search costs its Tavily credits at the
table's (or ``TAVILY_USD_PER_CREDIT``'s) price. A call no price covers is bounded by
``LEDGER_RESERVE_USD`` when set, else it has no bound and the caller refuses to start.

The real cost is what the reply's ``usage`` reports (OpenRouter's ``cost``, xAI's ticks), else its
tokens at the table's rates; a call that failed without usage cost nothing; a reply that says
nothing the table can price is counted at its bound (over, never under).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from oracleproto.analysis.prices import PriceTable, TokenPrice
from oracleproto.ledger.base import NANO
from oracleproto.primitives.usage_cost import cached_prompt_tokens, provider_cost_usd, token_count


def nano(usd: float) -> int:
    """USD as whole nano-USD, rounded up (a count that is never under)."""
    return math.ceil(usd * NANO - 1e-6) if usd > 0 else 0


def _json(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


@dataclass(frozen=True)
class CallPricing:
    """Prices of a run's calls: the table, the detector's slug and a search's price."""

    prices: PriceTable | None
    detector_model: str | None
    usd_per_search: float | None
    #: ``LEDGER_RESERVE_USD``: the bound of a call no price covers (None: such a call has none).
    unpriced_usd: float | None = None
    #: The completion cap of a chat body that names none (``LLM_MAX_TOKENS``).
    default_max_tokens: int = 12_000

    def _price(self, model: str) -> TokenPrice | None:
        return self.prices.models.get(model) if self.prices is not None else None

    def _per_call(self, model: str) -> float | None:
        """A price per call where tokens are not priced: the table's detector price, else the fallback."""
        if model == self.detector_model and self.prices is not None and self.prices.detector_usd_per_call:
            return self.prices.detector_usd_per_call
        return self.unpriced_usd

    def unpriced(self, models: Iterable[str], *, searches: bool) -> list[str]:
        """What could be called without a bound: model slugs, and ``search`` (empty when all are)."""
        missing = [m for m in models if self._price(m) is None and self._per_call(m) is None]
        if searches and self.usd_per_search is None and self.unpriced_usd is None:
            missing.append("search (Tavily credits)")
        return missing

    def bound(self, channel: str, body: bytes) -> int | None:
        """The most this call may cost, in nano-USD (None: nothing prices it)."""
        if channel == "search":
            usd = self.usd_per_search if self.usd_per_search is not None else self.unpriced_usd
            return None if usd is None else nano(usd)
        data = _json(body)
        model = str(data.get("model", "")) if isinstance(data, dict) else ""
        price = self._price(model)
        if price is None:
            usd = self._per_call(model)
            return None if usd is None else nano(usd)
        cap = self.default_max_tokens
        if isinstance(data, dict):
            for name in ("max_completion_tokens", "max_tokens"):
                given = token_count(data.get(name), name)
                if given is not None:
                    cap = given
                    break
        return nano(price.usd(len(body), cap, 0))

    def cost(self, channel: str, body: bytes, status: int, reply: bytes, bound: int) -> int:
        """What the answered call cost, in nano-USD (``bound`` where the reply does not say)."""
        if channel == "search":
            return bound if 200 <= status < 300 else 0
        data = _json(reply)
        usage = data.get("usage") if isinstance(data, dict) else None
        if not isinstance(usage, Mapping):
            return 0 if status >= 400 else bound
        reported = provider_cost_usd(usage)
        if reported is not None:
            return nano(reported)
        sent = _json(body)
        model = str(sent.get("model", "")) if isinstance(sent, dict) else ""
        price = self._price(model)
        prompt = token_count(usage.get("prompt_tokens"), "prompt_tokens")
        completion = token_count(usage.get("completion_tokens"), "completion_tokens")
        if price is None or prompt is None or completion is None:
            per_call = self._per_call(model)
            return bound if per_call is None else nano(per_call)
        return nano(price.usd(prompt, completion, cached_prompt_tokens(usage) or 0))
