"""The panel benchmark's comparison (benchmarks/panel_compare.py): a forecast value that differs
fails it; costs and latency-derived values are counted apart; the run id and retries are not
compared."""

from __future__ import annotations

import copy
from typing import Any

from benchmarks.panel_compare import compare_summaries

SUMMARY: dict[str, Any] = {
    "run_id": "20260101-000000-aaaa",
    "models": {
        "m::r5::c4": {
            "composite_accuracy": 0.5,
            "ci": {"composite_accuracy": [0.25, 0.75]},
            "total_cost_usd": 0.01,
            "cost_detail": {"search": {"calls": 3}},
            "avg_latency_ms": 120.0,
            "tool_use_dependence": {"logistic": [1.0, 2.0]},
        }
    },
    "call_failures": {"m::r5::c4": {"retries": {"llm": 0}}},
    "paired_differences": [{"a": "m", "b": "n", "difference": 0.5}],
}


def test_equal_summaries_compare_every_leaf() -> None:
    result = compare_summaries(SUMMARY, copy.deepcopy(SUMMARY))
    assert result.equal
    assert (result.compared, result.cost_compared, result.latency_compared) == (6, 2, 3)


def test_a_forecast_value_that_differs_fails_the_comparison() -> None:
    panel = copy.deepcopy(SUMMARY)
    panel["models"]["m::r5::c4"]["ci"]["composite_accuracy"][1] = 0.7500001
    panel["paired_differences"][0]["difference"] = -0.5
    result = compare_summaries(SUMMARY, panel)
    assert not result.equal
    assert result.differing == [
        "models.m::r5::c4.ci.composite_accuracy[1]: 0.75 vs 0.7500001",
        "paired_differences[0].difference: 0.5 vs -0.5",
    ]
    del panel["models"]["m::r5::c4"]["composite_accuracy"]
    assert "models.m::r5::c4.composite_accuracy (missing)" in compare_summaries(SUMMARY, panel).differing


def test_costs_and_latency_are_reported_apart_and_the_session_is_not_compared() -> None:
    panel = copy.deepcopy(SUMMARY)
    model = panel["models"]["m::r5::c4"]
    model["cost_detail"]["search"]["calls"] = 6
    model["avg_latency_ms"] = 99.0
    model["tool_use_dependence"]["logistic"][0] = 3.0
    panel["run_id"] = "20260101-000000-bbbb"
    panel["call_failures"] = None
    result = compare_summaries(SUMMARY, panel)
    assert result.equal
    assert result.cost_differing == ["models.m::r5::c4.cost_detail.search.calls: 3 vs 6"]
    assert result.latency_differing == [
        "models.m::r5::c4.avg_latency_ms: 120.0 vs 99.0",
        "models.m::r5::c4.tool_use_dependence.logistic[0]: 1.0 vs 3.0",
    ]
