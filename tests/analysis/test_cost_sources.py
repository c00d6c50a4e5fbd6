"""Cost as the paper reports it: the provider's invoice per call, else the price table, labelled
(provider / price table / mixed / n/a); search credits, detector usage, billed call errors, and
Eq. per-correct computed by hand (docs/design/metrics.md, "Cost as the paper reports it")."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from builder import Q, RunSpec, T, ok, write_run
from click.testing import CliRunner

from oracleproto.analysis.cost import load_prices
from oracleproto.analysis.postrun import analyze_with_settings
from oracleproto.analysis.report import analyze_run
from oracleproto.analysis.tables import render_csv, render_markdown
from oracleproto.cli.main import cli
from oracleproto.errors import AnalysisError
from oracleproto.settings.model import AnalysisSettings

PROV = "vendor-p/prov::r5::c4"
MIXED = "vendor-m/mixed::r5::c4"
NONE = "vendor-n/none::r5::c4"
QUESTIONS = (
    Q("q1", "yes_no", "single", ("Yes", "No"), "A"),
    Q("q4", "multiple_choice", "single", ("w", "x", "y", "z"), "C"),
)
#: Every model answers q1 right three times and q4 [right, wrong, third]: yes_no exam 1.0, mc 0.5,
#: so composite (paper) = (0.15 · 1 + 0.70 · 0.5) / (0.15 + 0.70) = 10/17.
COMPOSITE = 10 / 17


def step(i: int, *, cost: float | None = None, error: str | None = None, **tokens: int) -> dict[str, Any]:
    """One ``step_metrics`` entry as the agent writes it."""
    entry: dict[str, Any] = {
        "step": i,
        "prompt": tokens.get("prompt", 1000),
        "completion": tokens.get("completion", 100),
        "reasoning": None,
        "cached": tokens.get("cached", 0),
        "cost_usd": cost,
        "latency_ms": 10,
        "finish_reason": None if error else "stop",
        "n_tool_calls": 0,
        "belief": None,
    }
    if error:
        entry["error"] = error
    return entry


def search(
    ok_calls: int, failed: int, detector_usage: list[dict[str, Any] | None]
) -> tuple[dict[str, Any], ...]:
    """``search_calls`` entries: successful calls (the first audited by the detector), then failures."""
    calls: list[dict[str, Any]] = []
    for i in range(ok_calls):
        call: dict[str, Any] = {
            "query": f"s{i}",
            "end_date": "2025-12-01",
            "n_results": 1,
            "published_dates": [],
        }
        if i == 0:
            verdicts = ["keep"] + ["drop"] * (len(detector_usage) - 1)
            call.update(
                n_results_raw=len(detector_usage),
                n_results_kept=1,
                detector_verdicts=verdicts,
                detector_usage=detector_usage,
            )
        calls.append(call)
    calls += [
        {
            "query": "down",
            "end_date": "2025-12-01",
            "n_results": 0,
            "published_dates": [],
            "error_kind": "network",
        }
    ] * failed
    return tuple(calls)


DETECTOR_USAGE = [
    {"prompt": 300, "completion": 9, "reasoning": None, "cached": None, "cost_usd": 0.00003},
    {"prompt": 310, "completion": 4, "reasoning": None, "cached": None, "cost_usd": 0.00002},
    None,  # a verdict whose call was never billed (a network failure)
]


def trials(steps: list[dict[str, Any]], *, first: dict[str, Any] | None = None) -> dict[str, list[T]]:
    """q1 right ×3, q4 right, wrong, and a third sample given by ``first`` (default: right)."""
    answered = {"step_metrics": steps, "prompt": 2000, "completion": 200}
    third = T(**first) if first is not None else ok("C", **answered)
    return {
        "q1": [ok("A", **answered) for _ in range(3)],
        "q4": [ok("C", **answered), ok("D", **answered), third],
    }


def spec() -> RunSpec:
    provider_steps = [step(0, cost=0.005), step(1, cost=0.005)]
    billed_error = {
        "error": "bad_request",
        "prompt": 0,
        "completion": 0,
        "tools": 0,
        "steps": 0,
        "latency": 0,
        "step_metrics": [step(0, cost=0.003), step(1, cost=0.001, error="bad_request", completion=0)],
    }
    prov = trials(provider_steps, first=billed_error)
    prov["q1"][0] = replace(prov["q1"][0], search=search(2, 1, DETECTOR_USAGE))
    mixed = trials([step(0, cost=0.005), step(1, cached=500, prompt=1000, completion=100)])
    none = trials([step(0), step(1)])
    advanced = json.dumps({"search": {"search_depth": "advanced"}})
    return RunSpec(
        n=3,
        models={PROV: prov, MIXED: mixed, NONE: none},
        questions=QUESTIONS,
        snapshots={PROV: advanced},
    )


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return write_run(tmp_path, spec())


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    path = tmp_path / "prices.json"
    table = {
        "vendor-p/prov": {"input_usd_per_million": 50.0, "output_usd_per_million": 50.0},
        "vendor-m/mixed": {
            "input_usd_per_million": 1.0,
            "output_usd_per_million": 2.0,
            "cached_input_usd_per_million": 0.5,
        },
        "vendor-n/none": {"input_usd_per_million": 2.0, "output_usd_per_million": 4.0},
        "search": {"usd_per_credit": 0.008},
    }
    path.write_text(json.dumps(table), encoding="utf-8")
    return path


def test_provider_cost_wins_and_per_correct_follows_the_paper(run: Path, prices: Path) -> None:
    entry = analyze_run(run, prices=load_prices(prices), bootstrap_samples=0).models[PROV]
    assert entry["composite_accuracy"] == pytest.approx(COMPOSITE)
    # 5 answered samples × 2 steps × $0.005, plus the errored sample's two billed calls: the
    # provider's figures, not the (far higher) price table.
    total = 5 * 2 * 0.005 + 0.003 + 0.001
    assert (entry["cost_source"], entry["total_cost_usd"]) == ("provider", pytest.approx(total))
    # Eq. per-correct: C_total / (|D_eval| · n · Composite) = 0.054 / (2 · 3 · 10/17).
    assert entry["per_correct_cost_usd"] == pytest.approx(0.054 * 17 / 60)
    llm = entry["cost_detail"]["llm"]
    assert (llm["calls"], llm["calls_with_provider_cost"], llm["errored_calls"]) == (12, 12, 1)
    # The errored sample's tokens are billed, but the layout's token columns of its row stay 0.
    assert llm["prompt_tokens"] == 12 * 1000 and entry["prompt_tokens"] == 5 * 2000
    assert llm["price_table_usd"] == pytest.approx((12 * 1000 + 11 * 100) * 50.0 / 1e6)


def test_search_credits_and_detector_usage_in_the_with_tools_columns(run: Path, prices: Path) -> None:
    entry = analyze_run(run, prices=load_prices(prices), bootstrap_samples=0).models[PROV]
    search_detail, detector = entry["cost_detail"]["search"], entry["cost_detail"]["detector"]
    # Two successful advanced searches = 4 credits at $0.008; the failed one is not billed.
    assert (search_detail["calls"], search_detail["credits"]) == (2, 4)
    assert search_detail["usd"] == pytest.approx(4 * 0.008)
    assert (detector["source"], detector["calls"], detector["prompt_tokens"]) == ("provider", 2, 610)
    assert detector["usd"] == pytest.approx(0.00005)
    with_tools = 0.054 + 0.032 + 0.00005
    assert entry["total_cost_with_tools_usd"] == pytest.approx(with_tools)
    assert entry["per_correct_cost_with_tools_usd"] == pytest.approx(with_tools * 17 / 60)


def test_mixed_and_price_table_sources(run: Path, prices: Path) -> None:
    models = analyze_run(run, prices=load_prices(prices), bootstrap_samples=0).models
    mixed = models[MIXED]
    # Half the calls carry a cost; the other half is estimated with the cached-input price.
    rest = (500 * 1.0 + 500 * 0.5 + 100 * 2.0) / 1e6
    assert mixed["cost_source"] == "mixed"
    assert mixed["total_cost_usd"] == pytest.approx(6 * 0.005 + 6 * rest)
    none = models[NONE]
    assert none["cost_source"] == "price table"
    assert none["total_cost_usd"] == pytest.approx(12 * (1000 * 2.0 + 100 * 4.0) / 1e6)
    # No searches, no detector: the with-tools cost is the model cost.
    assert none["total_cost_with_tools_usd"] == pytest.approx(none["total_cost_usd"])


def test_without_prices_only_the_provider_invoice_is_reported(run: Path) -> None:
    result = analyze_run(run, bootstrap_samples=0)
    sources = {slug: (e["cost_source"], e["total_cost_usd"]) for slug, e in result.models.items()}
    assert sources[PROV] == ("provider", pytest.approx(0.054))
    assert sources[MIXED] == ("n/a", None) and sources[NONE] == ("n/a", None)
    assert result.models[PROV]["total_cost_with_tools_usd"] is None  # searches unpriced
    assert (
        "vendor-m/mixed::r5::c4: the provider reported the cost of 6 of 12 calls; give "
        "'vendor-m/mixed' token prices (--prices) to estimate the rest"
    ) in result.notes


def test_table3_shows_the_cost_source(run: Path, prices: Path) -> None:
    result = analyze_run(run, prices=load_prices(prices), bootstrap_samples=0)
    table = render_markdown(result, "table3_overall")
    header = next(line for line in table.splitlines() if line.startswith("| Model"))
    assert header == (
        "| Model | Composite Accuracy | Total Cost (USD) | Per-Correct Cost (USD) | Cost Source "
        "| Total Cost with Tools (USD) | Per-Correct Cost with Tools (USD) |"
    )
    rows = {line.split(" | ")[0][2:]: line for line in table.splitlines() if line.startswith("| vendor")}
    assert "| 0.05 | " in rows[PROV] and "| provider |" in rows[PROV]
    assert "| mixed |" in rows[MIXED] and "| price table |" in rows[NONE]
    csv_rows = render_csv(result, "table3_overall").splitlines()
    assert csv_rows[0].split(",")[4] == "Cost Source"
    assert [r.split(",")[4] for r in csv_rows[1:]] == ["provider", "mixed", "price table"]
    bare = render_markdown(analyze_run(run, bootstrap_samples=0), "table3_overall")
    assert bare.count("| n/a |") == 2


def test_reference_v4_csvs_give_costs_four_decimals_from_revision_6(run: Path, prices: Path) -> None:
    # scoring-conventions.md: reference-v4 rounds its CSV values to 4 decimals, as the earlier code did.
    table = load_prices(prices)

    def costs(**kw: Any) -> list[list[str]]:
        rows = render_csv(analyze_run(run, prices=table, bootstrap_samples=0, **kw), "table3_overall")
        return [row.split(",")[2:4] for row in rows.splitlines()[1:]]

    # 0.054 USD in all; per correct answer 0.0133… (reference-v4's count of correct answers).
    assert costs(convention="reference-v4")[0] == ["0.0540", "0.0133"]
    assert costs(convention="reference-v4", revision=5)[0] == ["0.05", "0.013"]
    assert costs(convention="paper")[0] == ["0.05", "0.015"]
    # The Markdown table keeps the paper's decimals under both conventions.
    reference = analyze_run(run, "reference-v4", prices=table, bootstrap_samples=0)
    assert "| 0.05 | 0.013 |" in render_markdown(reference, "table3_overall")


def test_credit_price_from_the_cli_and_the_setting(run: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    invoked = CliRunner().invoke(
        cli, ["report", str(run), "--tavily-usd-per-credit", "0.01", "--bootstrap", "0", "--out", str(out)]
    )
    assert invoked.exit_code == 0, invoked.output
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["models"][PROV]["cost_detail"]["search"]["usd"] == pytest.approx(0.04)
    settings = AnalysisSettings.from_values({"tavily_usd_per_credit": 0.01, "bootstrap_samples": 0})
    entry = analyze_with_settings(run, settings).models[PROV]
    assert entry["total_cost_with_tools_usd"] == pytest.approx(0.054 + 0.04 + 0.00005)
    bad = CliRunner().invoke(cli, ["report", str(run), "--tavily-usd-per-credit", "nan", "--out", str(out)])
    assert bad.exit_code == 2 and "give a finite number >= 0" in bad.output


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"usd_per_credit": 0.008, "usd_per_call": 0.01}, "gives both 'usd_per_credit' and 'usd_per_call'"),
        ({"usd_per_credit": "free"}, "search.usd_per_credit: 'free' is not a number"),
    ],
)
def test_bad_search_prices(tmp_path: Path, fields: dict[str, Any], message: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"search": fields}), encoding="utf-8")
    with pytest.raises(AnalysisError, match="price file") as info:
        load_prices(path)
    assert message in str(info.value)


def test_csv_cached_and_credit_columns(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(
        "slug,input_usd_per_million,output_usd_per_million,usd_per_call,cached_input_usd_per_million,usd_per_credit\n"
        "vendor-m/mixed,1,2,,0.5,\nsearch,,,,,0.008\n",
        encoding="utf-8",
    )
    table = load_prices(path)
    assert table.models["vendor-m/mixed"].cached_input_usd_per_million == 0.5
    assert (table.search_usd_per_credit, table.search_usd_per_call) == (0.008, None)
