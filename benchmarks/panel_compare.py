"""Compare a panel's ``summary.json`` with a single run's of the same experiment, value by value.

Every accuracy, consistency and probabilistic value must be equal (exactly). Compared apart and
allowed to differ:

* costs (a single run shares search and detector calls across its models, shards pay for them
  separately; the per-model figures come from each model's own DB and do agree);
* what derives from the recording's wall-clock latency: the mean latency and the tool-use
  dependence fit, whose covariates include ``latency_ms`` (two recordings of one run differ there
  too — nothing of the merge).

Not compared: the run id, and the retries and waits read from the cassettes (a panel carries its
members' DBs, not their cassettes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Keys describing the recording session rather than the forecasts: left out.
NOT_COMPARED = frozenset({"run_id", "call_failures"})
#: Keys holding costs: compared, reported, allowed to differ.
COST_KEYS = frozenset(
    {
        "cost_detail",
        "cost_source",
        "total_cost_usd",
        "per_correct_cost_usd",
        "total_cost_with_tools_usd",
        "per_correct_cost_with_tools_usd",
    }
)
#: Keys computed from measured latency: compared, reported, allowed to differ.
LATENCY_KEYS = frozenset({"avg_latency_ms", "tool_use_dependence"})


@dataclass
class Comparison:
    """Leaf values compared, and the paths that differ, per kind (values, costs, latency-derived)."""

    compared: int = 0
    differing: list[str] = field(default_factory=list)
    cost_compared: int = 0
    cost_differing: list[str] = field(default_factory=list)
    latency_compared: int = 0
    latency_differing: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        """True when every compared accuracy, consistency and probabilistic value is equal."""
        return not self.differing


def _bucket(kind: str, out: Comparison) -> list[str]:
    return {"value": out.differing, "cost": out.cost_differing, "latency": out.latency_differing}[kind]


def _count(kind: str, out: Comparison) -> None:
    if kind == "value":
        out.compared += 1
    elif kind == "cost":
        out.cost_compared += 1
    else:
        out.latency_compared += 1


def _walk(single: Any, panel: Any, path: str, kind: str, out: Comparison) -> None:
    if isinstance(single, dict) and isinstance(panel, dict):
        for key in sorted(set(single) | set(panel)):
            if key in NOT_COMPARED:
                continue
            sub = f"{path}.{key}" if path else str(key)
            sub_kind = kind
            if kind == "value" and key in COST_KEYS:
                sub_kind = "cost"
            elif kind == "value" and key in LATENCY_KEYS:
                sub_kind = "latency"
            if key not in single or key not in panel:
                _bucket(sub_kind, out).append(f"{sub} (missing)")
                continue
            _walk(single[key], panel[key], sub, sub_kind, out)
        return
    if isinstance(single, list) and isinstance(panel, list) and len(single) == len(panel):
        for i, (a, b) in enumerate(zip(single, panel, strict=True)):
            _walk(a, b, f"{path}[{i}]", kind, out)
        return
    _count(kind, out)
    if single != panel:
        _bucket(kind, out).append(f"{path}: {single!r} vs {panel!r}")


def compare_summaries(single: dict[str, Any], panel: dict[str, Any]) -> Comparison:
    """Every leaf of the two summaries, compared exactly (see the module docstring)."""
    out = Comparison()
    _walk(single, panel, "", "value", out)
    return out
