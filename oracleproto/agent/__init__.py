"""The time-masked ReAct loop (paper Algorithm 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oracleproto._lazy import export_dir, load_export

if TYPE_CHECKING:
    from oracleproto.agent.loop import run_sample
    from oracleproto.agent.policy import Limits, PolicyState, StepPlan, plan_step
    from oracleproto.agent.result import SampleResult
    from oracleproto.agent.status import Counters, StatusTexts

# Each public name and the module that defines it, imported on first use (PEP 562).
_EXPORTS = {
    "run_sample": "oracleproto.agent.loop",
    "SampleResult": "oracleproto.agent.result",
    "Counters": "oracleproto.agent.status",
    "StatusTexts": "oracleproto.agent.status",
    "Limits": "oracleproto.agent.policy",
    "PolicyState": "oracleproto.agent.policy",
    "StepPlan": "oracleproto.agent.policy",
    "plan_step": "oracleproto.agent.policy",
}

__all__ = [
    "Counters",
    "Limits",
    "PolicyState",
    "SampleResult",
    "StatusTexts",
    "StepPlan",
    "plan_step",
    "run_sample",
]


def __getattr__(name: str) -> Any:
    return load_export(__name__, _EXPORTS, name)


def __dir__() -> list[str]:
    return export_dir(globals(), _EXPORTS)
