"""Leakage-adjusted intervals (issue 29 §4): a leakage audit's bound carried into the scores.

The rule (docs/design/metrics.md, "Leakage-adjusted intervals"). ``audit score`` measures the residual
leakage rate FN/N — N labelled audit items, one search result drawn per test item (model,
question, sample), FN those the detector kept and a human labelled a leak — and writes its Wilson
95 % interval (``audit_summary.json`` ``fn_rate_ci``). Its upper end u is the bound used here,
recomputed from ``fn`` and ``n`` (the file rounds it to 6 decimals).

A model's score is a sum of per-trial contributions c_i ≥ 0 over its T graded trials (a trial's
credit times its weight in the score; ``leakage_composite.py``, ``points_f1/leakage.py``). Suppose
a share u of those trials read a leak the detector missed, and in the worst case every such leak
turned a wrong answer right: without it, the trial would have earned nothing. The largest loss of
score is then Δ = max Σ f_i·c_i over 0 ≤ f_i ≤ 1 with Σ f_i ≤ u·T: the ⌊u·T⌋ largest
contributions plus the fraction u·T − ⌊u·T⌋ of the next one (u·T need not be a whole number; this
is also the largest *expected* loss when each trial is leaked with some probability and the
expected share of leaked trials is u). The interval widens to [max(0, low − Δ), high] — the upper
end stays: under this rule a leak only helps — and the point value's worst case is value − Δ ≥ 0.

A pair a, b with value_a > value_b is flagged as an order the bound could flip when
value_a − Δ_a ≤ value_b: a's leaks alone could bring it to (a tie) or below b. b keeps its value,
the worst case for the order (b's own leaks could only lower b). Models tied on their point value
have no order to flip; a model no audit covers never falls, a model without a value is left out.

Everything is exact: contributions are Fractions, u is the exact value of its double, and the
numbers are rounded once when written.
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
_COUNTS = ("tp", "tn", "fp", "fn", "n")


@dataclass(frozen=True)
class AuditBound:
    """What a scored audit says about residual leakage: FN of N and the Wilson upper bound."""

    where: Path
    run_id: str | None
    fn: int
    n: int
    #: The upper end of the Wilson 95 % interval of FN/N, recomputed from the counts.
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
        raise AnalysisError(
            f"{where}: {key!r} must be a count (an integer >= 0), got {value!r}: not an `audit score` "
            "summary, or a damaged one; score the audit again (`oracleproto audit score DIR`)"
        )
    return value


def _summary_path(path: Path) -> tuple[Path, Path]:
    """(the audit folder, its summary file) of what ``--audit`` was given."""
    if path.is_dir():
        return path, path / SUMMARY_FILE
    if path.name != SUMMARY_FILE:
        raise AnalysisError(
            f"{path} is not an audit: --audit takes an audit folder (or its {SUMMARY_FILE}) scored with "
            "`oracleproto audit score DIR`"
        )
    return path.parent, path


def _read_summary(summary: Path, folder: Path) -> dict[str, Any]:
    if not summary.is_file():
        sampled = (folder / META_FILE).is_file()
        state = "has not been scored yet" if sampled else "is not an audit folder (no audit.json either)"
        raise AnalysisError(
            f"{folder} {state}: {SUMMARY_FILE} is missing. --audit takes an audit folder scored with "
            f"`oracleproto audit score {folder}` (after `audit sample` and labelling)"
        )
    try:
        document = json.loads(summary.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise AnalysisError(f"{summary}: not a JSON audit summary ({exc}); score the audit again") from None
    except OSError as exc:
        raise AnalysisError(f"{summary}: cannot be read ({exc.strerror or exc})") from None
    if not isinstance(document, dict):
        raise AnalysisError(f"{summary}: expected a JSON object (an `audit score` summary)")
    return document


def read_audit(path: Path) -> AuditBound:
    """The bound of a scored audit: its folder (or its ``audit_summary.json``)."""
    folder, summary = _summary_path(path)
    document = _read_summary(summary, folder)
    tp, tn, fp, fn, n = (_count(document, key, summary) for key in _COUNTS)
    if tp + tn + fp + fn != n:
        raise AnalysisError(
            f"{summary}: tp + tn + fp + fn = {tp + tn + fp + fn} is not n = {n}: a damaged or edited "
            "summary; score the audit again (`oracleproto audit score DIR`)"
        )
    interval = wilson_interval(fn, n)
    if interval is None:
        raise AnalysisError(
            f"{summary}: the audit has no labelled item in its confusion matrix (n = 0), so it bounds "
            "nothing; label items (`oracleproto audit label`) and score again"
        )
    run_id = document.get("run_id")
    if not isinstance(run_id, str) or not run_id:
        raise AnalysisError(
            f"{summary}: names no run (run_id {run_id!r}), so it cannot be matched to the run it audits; "
            "sample the audit with `oracleproto audit sample RUN --out DIR`, label it and score it"
        )
    return AuditBound(
        where=folder, run_id=run_id, fn=fn, n=n, upper=interval[1], models=_audited_models(folder / META_FILE)
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


def audit_note(audit: AuditBound, models: Sequence[str]) -> str | None:
    """A note when the audit sampled only some of the models its rate is applied to."""
    sampled = audit.models
    if sampled is None or set(models) <= set(sampled):
        return None
    return (
        f"the audit in {audit.where} sampled {len(sampled)} of the run's {len(models)} models; its FN/N "
        "bound is applied to every model of the run"
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


@dataclass(frozen=True)
class LeakBound:
    """One model's worst case: T graded trials, u·T of them leaked, the score lower by at most Δ."""

    trials: int
    #: u·T, exactly (not rounded to a whole number of trials).
    leaked: Fraction
    loss: Fraction


def leak_bound(contributions: Sequence[Fraction], upper: float) -> LeakBound:
    """Δ: the ⌊u·T⌋ largest contributions and the fraction u·T − ⌊u·T⌋ of the next (T = their number)."""
    if not 0 <= upper <= 1:
        raise ValueError(f"a rate bound must be in [0, 1], got {upper}")
    leaked = Fraction(upper) * len(contributions)
    whole = math.floor(leaked)
    largest = heapq.nlargest(whole + 1, contributions)
    loss = sum(largest[:whole], Fraction(0))
    if whole < len(largest):
        loss += (leaked - whole) * largest[whole]
    return LeakBound(len(contributions), leaked, loss)


def could_flip(
    order: Sequence[str], point: Mapping[str, Fraction | float], loss: Mapping[str, Fraction]
) -> list[tuple[str, str]]:
    """Pairs (a, b), a scoring above b, whose order the bound could flip: value_a − Δ_a ≤ value_b.

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
    "u = the upper end of the audit's Wilson 95% interval of FN/N; worst case: a share u of a model's "
    "T graded trials (u*T, not rounded) read a leak the detector missed and each turned a wrong answer "
    "right, on the trials that contributed most to the value; the value could be lower by the sum of "
    "the floor(u*T) largest per-trial contributions plus the fraction u*T - floor(u*T) of the next "
    "(loss), so the interval widens to [max(0, ci_low - loss), ci_high]; a pair a above b (value_a > "
    "value_b) could flip when value_a - loss_a <= value_b"
)


def bound_rows(
    leak: Leakage,
    order: Sequence[str],
    point: Mapping[str, Fraction | float | None],
    interval: Mapping[str, tuple[float, float] | None],
) -> list[dict[str, Any]]:
    """One row per model of ``order`` (bound columns None where no audit covers it or no value)."""
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
        rounded = round(float(value), 6)
        return repr(0.0 if rounded == 0 else rounded)
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


@dataclass(frozen=True)
class Shown:
    """How :func:`bound_lines` prints: the metric's name and column, its decimals, names, why a value
    is missing."""

    label: str
    column: str
    decimals: int
    name: Callable[[str], str]
    missing: Mapping[str, str]


def _number(value: Any, decimals: int) -> str:
    return "—" if value is None else f"{float(value):.{decimals}f}"


def _interval(low: Any, high: Any, decimals: int) -> str:
    return "—" if low is None or high is None else f"[{_number(low, decimals)}, {_number(high, decimals)}]"


def _bound_row(leak: Leakage, r: Mapping[str, Any], shown: Shown) -> str:
    name, d = shown.name(r["model"]).replace("|", "&#124;"), shown.decimals
    if r["value"] is None or r["trials"] is None:
        why = shown.missing.get(r["model"]) or (
            f"no {shown.label}" if r["value"] is None else "no audit covers it"
        )
        cells = [name, _number(r["value"], d), _interval(r["ci_low"], r["ci_high"], d), why, "", "", "", ""]
        return "| " + " | ".join(cells) + " |"
    below = ", ".join(shown.name(m) for m in r["could_fall_below"]) or "—"
    return (
        f"| {name} | {_number(r['value'], d)} | {_interval(r['ci_low'], r['ci_high'], d)} "
        f"| {float(r['leaked_trials_bound']):.2f} of {r['trials']} | {_number(r['leak_loss_max'], d)} "
        f"| {_number(r['value_leak_low'], d)} | {_interval(r['ci_leak_low'], r['ci_high'], d)} | {below} |"
    )


def bound_lines(leak: Leakage, rows: Sequence[Mapping[str, Any]], shown: Shown) -> str:
    """What ``report --audit`` prints under the tables: a Markdown table and the orders that could flip."""
    audits = {a.where.as_posix(): a for a in leak.audits.values()}
    lines = ["", f"### Leakage-adjusted {shown.label}", ""]
    for where in sorted(audits):
        a = audits[where]
        lines.append(
            f"Audit {where} (run {a.run_id}): FN/N = {a.fn}/{a.n}, Wilson 95% upper bound u = {a.upper:.4f}."
        )
    lines += [
        "",
        f"| Model | {shown.column} | 95% CI | Leaked trials ≤ u·T | Max loss Δ | {shown.column} − Δ "
        "| Leak-adjusted 95% CI | Could fall to or below |",
        "|---|---:|---|---:|---:|---:|---|---|",
        *(_bound_row(leak, r, shown) for r in rows),
        "",
        "Worst case: every missed leak turned a wrong answer right, on the trials that earned most; "
        "the interval's low end drops by Δ (not below 0), its high end stays. An order could flip when "
        "the higher value minus its Δ reaches the lower value.",
    ]
    flips = [f"{shown.name(a)} above {shown.name(b)}" for a, b in leak.flips]
    lines.append(f"Orders the bound could flip: {'; '.join(flips) or 'none'}.")
    return "\n".join(lines) + "\n"
