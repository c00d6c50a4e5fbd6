"""Leakage-adjusted intervals (issue 29 §4): a leakage audit's bound carried into the scores.

The rule (docs/design.md, "Leakage-adjusted intervals"): the audit (``audit score``) estimates
the per-test-item residual leakage rate FN/N — the paper's measure, one search result drawn per
(model, question, sample) and labelled blind to the detector — with a Wilson 95 % interval. Its
upper bound u bounds the share of a model's scored trials that read a leak the detector missed:
at most L = ⌈u·T⌉ of its T trials. In the worst case every such leak turned a wrong answer right,
and the leaks fell on the trials that earned the most: without them those L trials would have
earned nothing. So the score could be lower by at most Δ = the sum of the model's L largest
per-trial contributions to the score (a trial's credit times its weight in the score), and the
interval widens to [max(0, low − Δ), high]. The upper end stays: under this rule a leak only
helps. A pair a ranked above b could flip when score_a − Δ_a ≤ score_b (b's own leaks, if any,
would only lower b, so the worst case for the order leaves b as it is).

Everything is exact: contributions are Fractions, u is the exact value of its double, and Δ is
rounded once when written.
"""

from __future__ import annotations

import csv
import heapq
import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from oracleproto.errors import AnalysisError
from oracleproto.leakaudit.stats import wilson_interval

SUMMARY_FILE = "audit_summary.json"
META_FILE = "audit.json"
#: What ``report --audit`` writes beside the scores.
BOUNDS_FILE = "leakage_bounds.csv"
LEAKAGE_FILE = "leakage.json"


@dataclass(frozen=True)
class AuditBound:
    """What a scored audit says about residual leakage: FN of N and the Wilson upper bound."""

    where: Path
    run_id: str | None
    fn: int
    n: int
    #: The Wilson 95 % upper bound of FN/N, recomputed from the counts (the file rounds it).
    upper: float
    #: Models the audit drew its items from (``audit.json``), None when that file is absent.
    models: tuple[str, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON block that states the audit a bound came from."""
        return {
            "audit": str(self.where),
            "run_id": self.run_id,
            "fn": self.fn,
            "n": self.n,
            "fn_rate_upper": self.upper,
            "models": None if self.models is None else list(self.models),
        }


def _count(document: dict[str, Any], key: str, where: Path) -> int:
    value = document.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise AnalysisError(f"{where}: {key!r} must be a count (an integer >= 0), got {value!r}")
    return value


def read_audit(path: Path) -> AuditBound:
    """The bound of a scored audit: its folder (or its ``audit_summary.json``)."""
    folder = path if path.is_dir() else path.parent
    summary = path / SUMMARY_FILE if path.is_dir() else path
    if not summary.is_file():
        raise AnalysisError(
            f"{summary} is missing: --audit takes an audit folder scored with "
            f"`oracleproto audit score {folder}` (it writes {SUMMARY_FILE})"
        )
    try:
        document = json.loads(summary.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise AnalysisError(f"{summary}: not a JSON audit summary ({exc})") from None
    if not isinstance(document, dict):
        raise AnalysisError(f"{summary}: expected a JSON object (an `audit score` summary)")
    fn, n = _count(document, "fn", summary), _count(document, "n", summary)
    if fn > n:
        raise AnalysisError(f"{summary}: fn = {fn} is more than n = {n}")
    interval = wilson_interval(fn, n)
    if interval is None:
        raise AnalysisError(
            f"{summary}: the audit has no labelled item in its confusion matrix (n = 0), so it bounds "
            "nothing; label items (`oracleproto audit label`) and score again"
        )
    run_id = document.get("run_id")
    return AuditBound(
        where=folder,
        run_id=run_id if isinstance(run_id, str) else None,
        fn=fn,
        n=n,
        upper=interval[1],
        models=_audited_models(folder / META_FILE),
    )


def check_audit_run(audit: AuditBound, run_id: str) -> None:
    """Refuse an audit of another run: its rate measures that run's searches and detector."""
    if audit.run_id == run_id:
        return
    sampled = f"was sampled from run {audit.run_id}" if audit.run_id else "names no run (no run_id)"
    raise AnalysisError(
        f"the audit in {audit.where} {sampled}, not from run {run_id}: attach an audit to the run it "
        f"audits (`oracleproto audit sample {run_id} --out DIR`, label, `audit score DIR`)"
    )


def _audited_models(meta: Path) -> tuple[str, ...] | None:
    try:
        document = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # the note about sampled models is a courtesy; the bound needs only the summary
    parameters = document.get("parameters") if isinstance(document, dict) else None
    models = parameters.get("models") if isinstance(parameters, dict) else None
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        return None
    return tuple(models)


def leaked_trials(upper: float, trials: int) -> int:
    """L = ⌈u·T⌉: the most trials that may have read a missed leak (u exactly as its double)."""
    return min(trials, math.ceil(Fraction(upper) * trials))


@dataclass(frozen=True)
class LeakBound:
    """One model's worst case: T scored trials, at most L leaked, the score lower by at most Δ."""

    trials: int
    leaked: int
    loss: Fraction


def leak_bound(contributions: Sequence[Fraction], upper: float) -> LeakBound:
    """Δ = the sum of the L largest per-trial contributions (L = ⌈u·T⌉, T = their number)."""
    leaked = leaked_trials(upper, len(contributions))
    largest = heapq.nlargest(leaked, contributions)
    return LeakBound(len(contributions), leaked, sum(largest, Fraction(0)))


def could_flip(
    order: Sequence[str], point: Mapping[str, Fraction | float], loss: Mapping[str, Fraction]
) -> list[tuple[str, str]]:
    """Pairs (a, b), a scoring above b, whose order the bound could flip: score_a − Δ_a ≤ score_b.

    Models without a point value are left out; a model without a bound (no audit covers it) never
    falls. Pairs follow ``order``, the higher-scoring model first.
    """
    known = [m for m in order if point.get(m) is not None]
    flips = []
    for i, a in enumerate(known):
        for b in known[i + 1 :]:
            high, low = (a, b) if point[a] >= point[b] else (b, a)
            if point[high] == point[low] or high not in loss:
                continue  # tied already (no order to flip), or nothing bounds the higher one's leaks
            if Fraction(point[high]) - loss[high] <= Fraction(point[low]):
                flips.append((high, low))
    return flips


@dataclass(frozen=True)
class Leakage:
    """Every covered model's bound and the orders the bounds could flip."""

    metric: str
    #: Model → the audit that covers it (the audit of the run the model comes from).
    audits: dict[str, AuditBound]
    bounds: dict[str, LeakBound]
    flips: list[tuple[str, str]]

    def falls_below(self, slug: str) -> list[str]:
        """The models ``slug`` ranks above but could fall to or below under the bound."""
        return [low for high, low in self.flips if high == slug]


def apply_bound(
    metric: str,
    order: Sequence[str],
    point: Mapping[str, Fraction | float | None],
    contributions: Mapping[str, Sequence[Fraction]],
    audits: Mapping[str, AuditBound],
) -> Leakage:
    """The bound of each model of ``order`` an audit covers (``contributions``: its per-trial ones)."""
    covered = [m for m in order if m in audits and m in contributions and point.get(m) is not None]
    bounds = {m: leak_bound(contributions[m], audits[m].upper) for m in covered}
    defined = {m: v for m, v in point.items() if v is not None}
    flips = could_flip(order, defined, {m: b.loss for m, b in bounds.items()})
    return Leakage(metric, {m: audits[m] for m in covered}, bounds, flips)


#: ``leakage_bounds.csv``'s columns (``value``: the metric's point value, ``ci_*`` its interval).
COLUMNS = (
    "model",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "trials",
    "leaked_trials_bound",
    "leak_loss_max",
    "value_leak_low",
    "ci_leak_low",
    "could_fall_below",
)
RULE = (
    "worst case: at most ceil(u*T) of a model's T scored trials read a leak the detector missed "
    "(u: the audit's Wilson 95% upper bound of FN/N), each turned a wrong answer right, and they were "
    "the trials that contributed most; the value could be lower by the sum of those contributions, "
    "so the interval widens to [max(0, low - that), high]; a higher-ranked model whose lowered value "
    "reaches the lower-ranked one's could flip the order"
)


def bound_rows(
    leak: Leakage,
    order: Sequence[str],
    point: Mapping[str, Fraction | float | None],
    interval: Mapping[str, tuple[float, float] | None],
) -> list[dict[str, Any]]:
    """One row per model of ``order`` (bound columns None where no audit covers it)."""
    rows = []
    for slug in order:
        bound, value, ci = leak.bounds.get(slug), point.get(slug), interval.get(slug)
        lowered = None if bound is None or value is None else Fraction(value) - bound.loss
        widened = None if bound is None or ci is None else max(Fraction(0), Fraction(ci[0]) - bound.loss)
        rows.append(
            {
                "model": slug,
                "metric": leak.metric,
                "value": value,
                "ci_low": None if ci is None else ci[0],
                "ci_high": None if ci is None else ci[1],
                "trials": None if bound is None else bound.trials,
                "leaked_trials_bound": None if bound is None else bound.leaked,
                "leak_loss_max": None if bound is None else bound.loss,
                "value_leak_low": lowered,
                "ci_leak_low": widened,
                "could_fall_below": leak.falls_below(slug),
            }
        )
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, Fraction | float):
        return repr(round(float(value), 6))
    return str(value)


def bounds_csv(rows: Sequence[Mapping[str, Any]], shown: Callable[[str], str]) -> str:
    """``leakage_bounds.csv``: numbers at 6 decimals, empty when undefined, names joined by ``; ``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        below = "; ".join(shown(m) for m in r["could_fall_below"])
        writer.writerow([shown(r["model"]), *(_cell(r[c]) for c in COLUMNS[1:-1]), below])
    return buffer.getvalue()


def _plain(value: Any) -> Any:
    if isinstance(value, Fraction | float):
        rounded = round(float(value), 6)
        return 0.0 if rounded == 0 else rounded
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def leakage_json(
    run_ids: Sequence[str], convention: str, leak: Leakage, rows: Sequence[dict[str, Any]]
) -> str:
    """``leakage.json``: the rule, the audits, every model's bound and the orders that could flip."""
    audits = {a.where.as_posix(): a.as_dict() for a in leak.audits.values()}
    document = {
        "schema": "oracleproto-leakage/1",
        "run_ids": list(run_ids),
        "convention": convention,
        "metric": leak.metric,
        "rule": RULE,
        "audits": [audits[k] for k in sorted(audits)],
        "models": {r["model"]: r for r in rows},
        "could_flip": [list(pair) for pair in leak.flips],
    }
    return json.dumps(_plain(document), sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def bound_lines(
    leak: Leakage, rows: Sequence[Mapping[str, Any]], shown: Callable[[str], str], decimals: int
) -> str:
    """What ``report --audit`` prints under the tables: each model's bound, the orders that could flip."""
    lines = [
        "",
        f"Leakage-adjusted {leak.metric} (worst case: every missed leak turned a wrong answer right):",
    ]
    for r in rows:
        name = shown(r["model"])
        if r["trials"] is None:
            lines.append(f"- {name}: no audit covers it")
            continue
        audit = leak.audits[r["model"]]
        low = "—" if r["ci_leak_low"] is None else f"{float(r['ci_leak_low']):.{decimals}f}"
        lines.append(
            f"- {name}: FN/N = {audit.fn}/{audit.n} (upper {audit.upper:.4f}): at most "
            f"{r['leaked_trials_bound']} of {r['trials']} trials, at most "
            f"{float(r['leak_loss_max']):.{decimals}f} lower; widened 95% CI low {low}"
        )
    flips = [f"{shown(a)} above {shown(b)}" for a, b in leak.flips]
    lines.append(f"Orders the bound could flip: {', '.join(flips) or 'none'}.")
    return "\n".join(lines) + "\n"
