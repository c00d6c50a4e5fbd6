"""Cost from recorded token usage and a user price table (Eq. per-correct).

Price file (JSON object or CSV with the same fields), USD:
  JSON: {"<real slug>": {"input_usd_per_million": 0.27, "output_usd_per_million": 1.1},
         "search": {"usd_per_call": 0.008}, "detector": {"usd_per_call": 0.0002}}
  CSV : header ``slug,input_usd_per_million,output_usd_per_million,usd_per_call``; the rows
        ``search`` and ``detector`` use ``usd_per_call`` only.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from oracleproto.analysis.trials import TrialTable
from oracleproto.errors import AnalysisError

RESERVED = ("search", "detector")


@dataclass(frozen=True)
class TokenPrice:
    """USD per million input (prompt) and output (completion) tokens of one model."""

    input_usd_per_million: float
    output_usd_per_million: float


@dataclass(frozen=True)
class PriceTable:
    """Model token prices keyed by real slug, plus per-call prices of search and detector."""

    models: dict[str, TokenPrice]
    search_usd_per_call: float | None = None
    detector_usd_per_call: float | None = None


def _number(path: Path, where: str, value: object) -> float:
    try:
        number = float(str(value))
    except ValueError:
        raise AnalysisError(f"price file {path}: {where}: {value!r} is not a number") from None
    if not math.isfinite(number) or number < 0:
        raise AnalysisError(f"price file {path}: {where}: price must be a finite number >= 0, got {value!r}")
    return number


def _entry(path: Path, slug: str, fields: dict[str, object]) -> tuple[str, object]:
    if slug in RESERVED:
        if fields.get("usd_per_call") in (None, ""):
            raise AnalysisError(f"price file {path}: {slug!r} needs 'usd_per_call'")
        return slug, _number(path, f"{slug}.usd_per_call", fields["usd_per_call"])
    for key in ("input_usd_per_million", "output_usd_per_million"):
        if fields.get(key) in (None, ""):
            raise AnalysisError(f"price file {path}: model {slug!r} needs {key!r} (USD per million tokens)")
    return slug, TokenPrice(
        _number(path, f"{slug}.input_usd_per_million", fields["input_usd_per_million"]),
        _number(path, f"{slug}.output_usd_per_million", fields["output_usd_per_million"]),
    )


def load_prices(path: Path) -> PriceTable:
    """Read a JSON or CSV price table; a clear error names the file and the bad entry."""
    path = Path(path)
    if not path.is_file():
        raise AnalysisError(f"price file {path} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise AnalysisError(
            f"price file {path} is not UTF-8 text (byte offset {exc.start}); re-save it as UTF-8"
        ) from None
    entries: list[tuple[str, object]] = []
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise AnalysisError(f"price file {path} is not valid JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise AnalysisError(f"price file {path}: expected a JSON object slug -> prices")
        for slug, fields in sorted(data.items()):
            if not isinstance(fields, dict):
                raise AnalysisError(f"price file {path}: entry {slug!r} must be an object")
            entries.append(_entry(path, slug, fields))
    elif path.suffix.lower() == ".csv":
        reader = csv.DictReader(io.StringIO(text))
        if not reader.fieldnames or "slug" not in reader.fieldnames:
            raise AnalysisError(
                f"price file {path}: CSV header must be "
                "'slug,input_usd_per_million,output_usd_per_million,usd_per_call'"
            )
        for line, row in enumerate(reader, start=2):
            slug = (row.get("slug") or "").strip()
            if not slug:
                raise AnalysisError(f"price file {path}: line {line}: empty slug")
            entries.append(_entry(path, slug, {k: v for k, v in row.items() if k}))
    else:
        raise AnalysisError(f"price file {path}: unsupported extension {path.suffix!r}; use .json or .csv")
    models = {s: v for s, v in entries if isinstance(v, TokenPrice)}
    calls = {s: v for s, v in entries if isinstance(v, float)}
    return PriceTable(models, calls.get("search"), calls.get("detector"))


@dataclass(frozen=True)
class CostSummary:
    """Token and call totals of one model with their USD cost (None when a price is missing)."""

    prompt_tokens: int
    completion_tokens: int
    search_calls: int
    detector_calls: int
    model_cost_usd: float | None
    total_cost_usd: float | None  # model + search + detector (None if any needed price is missing)


def model_cost(t: TrialTable, real_slug: str, prices: PriceTable | None) -> CostSummary:
    """Cost of a model's recorded trials; completion tokens already include reasoning tokens."""
    prompt = int(t.prompt_tokens.sum())
    completion = int(t.completion_tokens.sum())
    search = int(t.search_calls.sum())
    detector = int(t.detector_calls.sum())
    price = prices.models.get(real_slug) if prices else None
    if price is None or prices is None:
        return CostSummary(prompt, completion, search, detector, None, None)
    model_usd = (prompt * price.input_usd_per_million + completion * price.output_usd_per_million) / 1e6
    total: float | None = model_usd
    for count, unit in ((search, prices.search_usd_per_call), (detector, prices.detector_usd_per_call)):
        if count:
            total = None if unit is None or total is None else total + count * unit
    return CostSummary(prompt, completion, search, detector, model_usd, total)


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
