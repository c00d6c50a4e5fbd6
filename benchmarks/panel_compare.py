"""Compare a panel's ``summary.json`` with a single run's of the same experiment, value by value.

Every accuracy, consistency and probabilistic value must be equal (exactly). Compared apart and
allowed to differ: costs (a single run shares search and detector calls across its models, shards
pay for them separately). Not compared: the run id, the recording's wall-clock latency, and the
retries and waits read from the cassettes (a panel carries its members' DBs, not their cassettes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: Keys whose values describe the recording session, not the forecasts.
NOT_COMPARED = frozenset({"run_id", "avg_latency_ms", "call_failures"})
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


@dataclass
class Comparison:
    """Leaf values compared, the paths that differ, and the cost paths that differ."""

    compared: int = 0
    differing: list[str] = field(default_factory=list)
    cost_compared: int = 0
    cost_differing: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        """True when every compared non-cost value is equal."""
        return not self.differing


def _walk(single: Any, panel: Any, path: str, cost: bool, out: Comparison) -> None:
    if isinstance(single, dict) and isinstance(panel, dict):
        for key in sorted(set(single) | set(panel)):
            if key in NOT_COMPARED:
                continue
            sub = f"{path}.{key}" if path else str(key)
            if key not in single or key not in panel:
                (out.cost_differing if cost or key in COST_KEYS else out.differing).append(f"{sub} (missing)")
                continue
            _walk(single[key], panel[key], sub, cost or key in COST_KEYS, out)
        return
    if isinstance(single, list) and isinstance(panel, list) and len(single) == len(panel):
        for i, (a, b) in enumerate(zip(single, panel, strict=True)):
            _walk(a, b, f"{path}[{i}]", cost, out)
        return
    if cost:
        out.cost_compared += 1
        if single != panel:
            out.cost_differing.append(f"{path}: {single!r} vs {panel!r}")
    else:
        out.compared += 1
        if single != panel:
            out.differing.append(f"{path}: {single!r} vs {panel!r}")


def compare_summaries(single: dict[str, Any], panel: dict[str, Any]) -> Comparison:
    """Every leaf of the two summaries, compared exactly (see the module docstring)."""
    out = Comparison()
    _walk(single, panel, "", False, out)
    return out
