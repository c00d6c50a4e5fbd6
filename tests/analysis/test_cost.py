"""Cost from token usage and a price table; every bad price file has a clear message."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import ALPHA, BETA

from oracleproto.analysis.cost import load_prices
from oracleproto.analysis.report import analyze_run
from oracleproto.errors import AnalysisError


def test_costs_hand_computed(main_run: Path, prices_file: Path) -> None:
    result = analyze_run(main_run, prices=load_prices(prices_file), bootstrap_samples=0)
    a = result.models[ALPHA]
    # 19 answered slots × (100 prompt, 40 completion); $100 / $400 per million
    assert (a["prompt_tokens"], a["completion_tokens"]) == (1900, 760)
    assert a["total_cost_usd"] == pytest.approx((1900 * 100.0 + 760 * 400.0) / 1e6)
    # one successful search ($0.008; the failed one is not billed) and three detector verdicts ($0.001)
    assert (a["search_calls"], a["detector_calls"]) == (1, 3)
    assert a["total_cost_with_tools_usd"] == pytest.approx(0.494 + 0.008 + 0.003)
    # Eq. per-correct: C / (|D_eval| · n · composite), |D_eval| = 7 admitted questions
    assert a["per_correct_cost_usd"] == pytest.approx(0.494 / (7 * 3 * a["composite_accuracy"]))
    b = result.models[BETA]
    # beta: q3 fully excluded → 6 admitted questions; 21 slots − 3 cutoffs − 3 call errors = 15 answered,
    # q4 sample 0 used 300 prompt tokens instead of 100
    assert b["eval_questions"] == 6
    assert b["prompt_tokens"] == 15 * 100 + 200
    assert b["total_cost_usd"] == pytest.approx((1700 * 50.0 + 15 * 40 * 200.0) / 1e6)


def test_csv_prices_and_missing_model(main_run: Path, tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(
        "slug,input_usd_per_million,output_usd_per_million,usd_per_call\nvendor-a/alpha,1,4,\n",
        encoding="utf-8",
    )
    result = analyze_run(main_run, prices=load_prices(path), bootstrap_samples=0)
    assert result.models[ALPHA]["total_cost_usd"] == pytest.approx(0.00494)
    assert result.models[ALPHA]["total_cost_with_tools_usd"] is None  # search price missing
    assert result.models[BETA]["total_cost_usd"] is None
    assert "no price for model 'vendor-b/beta': its cost columns are empty" in result.notes


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("p.json", "{not json", "is not valid JSON"),
        ("p.json", "[1, 2]", "expected a JSON object slug -> prices"),
        ("p.json", '{"m": {"input_usd_per_million": 1}}', "model 'm' needs 'output_usd_per_million'"),
        ("p.json", '{"m": {"input_usd_per_million": -1, "output_usd_per_million": 1}}', "finite number >= 0"),
        (
            "p.json",
            '{"m": {"input_usd_per_million": "x", "output_usd_per_million": 1}}',
            "'x' is not a number",
        ),
        ("p.json", '{"search": {}}', "'search' needs 'usd_per_call'"),
        ("p.csv", "model,price\nm,1\n", "CSV header must be"),
        ("p.csv", "slug,input_usd_per_million,output_usd_per_million\n,1,2\n", "line 2: empty slug"),
        ("p.yaml", "m: 1", "unsupported extension '.yaml'"),
    ],
)
def test_bad_price_files(tmp_path: Path, name: str, text: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AnalysisError, match="price file") as info:
        load_prices(path)
    assert message in str(info.value)


def test_missing_price_file(tmp_path: Path) -> None:
    with pytest.raises(AnalysisError, match=r"price file .*nope\.json does not exist"):
        load_prices(tmp_path / "nope.json")
