"""Paper-ready tables and plots: CIs, decimals, significance bold, display names, 300 dpi, gaps."""

from __future__ import annotations

import json
import re
import struct
from dataclasses import replace
from pathlib import Path
from typing import Any

import matplotlib.text
import pytest
from click.testing import CliRunner
from conftest import ALPHA, BETA
from matplotlib.figure import Figure

from oracleproto.analysis import plots
from oracleproto.analysis.cost import NO_COST_NOTE, load_prices
from oracleproto.analysis.report import AnalysisResult, analyze_run
from oracleproto.analysis.setup_tables import render_setup
from oracleproto.analysis.tables import (
    DEFAULT_STYLE,
    TableStyle,
    render_csv,
    render_latex,
    render_markdown,
)
from oracleproto.analysis.writer import write_analysis
from oracleproto.cli.main import cli
from oracleproto.cli.report import report

#: These tests look inside the drawing (captured figures, spied error bars): no per-worker memo.
pytestmark = pytest.mark.plots_drawn


@pytest.fixture
def result(main_run: Path) -> AnalysisResult:
    """The two-model run, with a small bootstrap."""
    return analyze_run(main_run, bootstrap_samples=200, seed=7)


def _row(markdown: str, shown: str) -> list[str]:
    line = next(line for line in markdown.splitlines() if line.startswith(f"| {shown} |"))
    return [cell.strip() for cell in line.strip("|").split("|")][1:]


def test_default_style_keeps_todays_bytes(result: AnalysisResult) -> None:
    for render in (render_markdown, render_csv, render_latex):
        assert render(result, "table3_overall") == render(result, "table3_overall", DEFAULT_STYLE)
    text = render_markdown(result, "table3_overall")
    assert "[" not in text and "Bold:" not in text


def test_ci_next_to_the_main_values(result: AnalysisResult) -> None:
    style = TableStyle(ci=True)
    cell = _row(render_markdown(result, "table3_overall", style), ALPHA)[0]
    lo, hi = result.models[ALPHA]["ci"]["composite_accuracy"]
    value = result.models[ALPHA]["composite_accuracy"]
    assert cell.replace("**", "") == f"{value:.4f} [{lo:.4f}, {hi:.4f}]"
    p1 = _row(render_markdown(result, "table5_consistency", style), BETA)[0]
    assert re.fullmatch(r"(\*\*)?\d\.\d{4}(\*\*)? \[\d\.\d{4}, \d\.\d{4}\]", p1)
    assert "Brackets: 95% percentile bootstrap interval (B = 200" in render_markdown(
        result, "table3_overall", style
    )
    # Columns without a bootstrap (costs, kappas) carry no brackets.
    assert "[" not in _row(render_markdown(result, "table5_consistency", style), BETA)[1]
    header, first = render_csv(result, "table3_overall", style).splitlines()[:2]
    assert header.startswith("model,Composite Accuracy,Composite Accuracy CI low,Composite Accuracy CI high,")
    assert first.split(",")[2:4] == [f"{lo:.4f}", f"{hi:.4f}"]
    assert rf"{value:.4f} [{lo:.4f}, {hi:.4f}]" in render_latex(result, "table3_overall", style)


def test_no_bootstrap_means_no_brackets(main_run: Path) -> None:
    bare = analyze_run(main_run, bootstrap_samples=0)
    assert "[" not in _row(render_markdown(bare, "table3_overall", TableStyle(ci=True)), ALPHA)[0]


@pytest.mark.parametrize("decimals", [0, 2, 6])
def test_decimals(result: AnalysisResult, decimals: int) -> None:
    style = TableStyle(decimals=decimals)
    cells = _row(render_markdown(result, "table5_consistency", style), ALPHA)
    value = result.models[ALPHA]["pass_at_1_avg"]
    assert cells[0].replace("**", "") == f"{value:.{decimals}f}"
    frac = re.compile(r"-?\d+" + (rf"\.\d{{{decimals}}}" if decimals else ""))
    assert all(frac.fullmatch(c.replace("**", "")) for c in cells if c != "—")


def test_decimals_leave_text_columns_alone(main_run: Path, prices_file: Path) -> None:
    priced = analyze_run(main_run, prices=load_prices(prices_file), bootstrap_samples=0)
    cells = _row(render_markdown(priced, "table3_overall", TableStyle(decimals=1)), ALPHA)
    assert cells[3] == "price table"
    assert re.fullmatch(r"\d+\.\d", cells[1].replace("**", ""))


def _rigged(result: AnalysisResult, alpha: float, beta: float, ci: tuple[float, float]) -> AnalysisResult:
    """``result`` with pass@1 set to ``alpha``/``beta`` and the paired CI of alpha − beta set to ``ci``."""
    models: dict[str, dict[str, Any]] = {slug: dict(entry) for slug, entry in result.models.items()}
    models[ALPHA]["pass_at_1_avg"], models[BETA]["pass_at_1_avg"] = alpha, beta
    pairs = [p for p in result.paired_differences if p["metric"] != "pass_at_1_avg"]
    pairs.append({"a": ALPHA, "b": BETA, "metric": "pass_at_1_avg", "difference": alpha - beta, "ci": ci})
    return replace(result, models=models, paired_differences=pairs)


def _bold(result: AnalysisResult, style: TableStyle) -> dict[str, bool]:
    text = render_markdown(result, "table5_consistency", style)
    return {slug: _row(text, slug)[0].startswith("**") for slug in (ALPHA, BETA)}


SIGNIFICANT = TableStyle(bold="significant")


@pytest.mark.parametrize(
    ("alpha", "beta", "ci", "expected"),
    [
        (0.8, 0.5, (0.1, 0.4), {ALPHA: True, BETA: False}),  # best significantly better
        (0.8, 0.5, (-0.05, 0.4), {ALPHA: False, BETA: False}),  # interval covers 0
        (0.5, 0.8, (-0.4, -0.1), {ALPHA: False, BETA: True}),  # best is the pair's b: flipped
        (0.5, 0.8, (0.1, 0.4), {ALPHA: False, BETA: False}),  # the interval favours the other one
        (0.7, 0.7, (0.1, 0.4), {ALPHA: False, BETA: False}),  # a tie is never significant
    ],
)
def test_bold_only_where_significantly_better(
    result: AnalysisResult, alpha: float, beta: float, ci: tuple[float, float], expected: dict[str, bool]
) -> None:
    assert _bold(_rigged(result, alpha, beta, ci), SIGNIFICANT) == expected


def test_best_rule_bolds_every_best_and_none_bolds_nothing(result: AnalysisResult) -> None:
    rigged = _rigged(result, 0.7, 0.7, (-0.1, 0.1))
    assert _bold(rigged, DEFAULT_STYLE) == {ALPHA: True, BETA: True}
    assert _bold(rigged, TableStyle(bold="none")) == {ALPHA: False, BETA: False}


def test_untested_columns_are_never_bold_under_the_significance_rule(result: AnalysisResult) -> None:
    text = render_markdown(result, "table4_buckets", SIGNIFICANT)
    assert "**" not in text.split("\n\n")[2]
    assert "No value is bold: these columns have no paired bootstrap test." in text
    table5 = render_markdown(result, "table5_consistency", SIGNIFICANT)
    assert all(not c.startswith("**") for c in _row(table5, ALPHA)[1:] + _row(table5, BETA)[1:])
    assert "(pass@1; the other columns have no paired test)" in table5


def test_counts_table(result: AnalysisResult) -> None:
    text = render_setup(result, "table_counts", "md")
    # alpha: 7 questions, one sample excluded (q4), one call error (q2), one parse failure (q2).
    assert _row(text, ALPHA) == ["7", "0", "3", "20", "1", "1"]
    # beta: q3 wholly excluded; q7's three samples are call errors; one parse failure (q6).
    assert _row(text, BETA) == ["6", "1", "3", "18", "3", "1"]


def test_display_names_in_tables_via_names_file(main_run: Path, tmp_path: Path) -> None:
    names = tmp_path / "names.json"
    names.write_text(json.dumps({"vendor-a/alpha": "Alpha One"}), encoding="utf-8")
    out = tmp_path / "styled"
    args = [str(main_run), "--out", str(out), "--names", str(names), "--ci", "--bold", "significant"]
    res = CliRunner().invoke(report, [*args, "--decimals", "3", "--bootstrap", "50"], catch_exceptions=False)
    assert res.exit_code == 0, res.stderr
    assert re.search(r"\| Alpha One \| (\*\*)?\d\.\d{3}(\*\*)? \[\d\.\d{3}, \d\.\d{3}\] \|", res.stdout)
    assert "Alpha One" in (out / "table3_overall.tex").read_text(encoding="utf-8")
    assert "| Alpha One |" in (out / "table_counts.md").read_text(encoding="utf-8")
    assert "replaced the run's analysis/" not in res.stderr  # --out: the run's analysis is untouched


def test_styled_tables_never_replace_the_sealed_analysis(main_run: Path) -> None:
    # main_run's sealed convention is reference-v4 (an earlier-implementation manifest).
    args = [str(main_run), "--convention", "reference-v4", "--ci", "--bootstrap", "0"]
    res = CliRunner().invoke(cli, ["report", *args])
    assert res.exit_code == 2
    assert "--bootstrap, --ci/--no-ci would make the run's analysis/ differ from what `verify`" in res.stderr
    command = f"oracleproto report {main_run} --convention reference-v4 --ci --bootstrap 0 --out DIR"
    assert command in res.stderr
    assert not (main_run / "analysis").exists()
    # Another convention goes beside it, styled as asked.
    res = CliRunner().invoke(report, [str(main_run), "--ci", "--bootstrap", "0"], catch_exceptions=False)
    assert res.exit_code == 0
    assert (main_run / "analysis" / "paper" / "table3_overall.md").is_file()


# ---------------------------------------------------------------- plots


def _png_dpi(path: Path) -> float:
    """Horizontal resolution from the PNG's pHYs chunk, in dots per inch."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos = 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        if kind == b"pHYs":
            x, _y, unit = struct.unpack(">IIB", data[pos + 8 : pos + 17])
            assert unit == 1  # per metre
            return x * 0.0254
        pos += 12 + length
    raise AssertionError("no pHYs chunk")


def test_plots_are_300_dpi_png_and_svg(main_run: Path, prices_file: Path, tmp_path: Path) -> None:
    priced = analyze_run(main_run, prices=load_prices(prices_file), bootstrap_samples=50)
    written = plots.write_plots(priced, tmp_path)
    assert sorted(p.name for p in written) == sorted(
        f"{stem}.{ext}" for stem in ("buckets", "cost_vs_composite", "pass_at_1") for ext in ("png", "svg")
    )
    for png in tmp_path.glob("*.png"):
        assert round(_png_dpi(png)) == 300
    for svg in tmp_path.glob("*.svg"):
        text = svg.read_text(encoding="utf-8")
        assert "<dc:date>" not in text and text.startswith("<?xml")
    assert NO_COST_NOTE not in priced.notes


def _figure_texts(monkeypatch: pytest.MonkeyPatch, result: AnalysisResult, tmp_path: Path) -> dict[str, Any]:
    """Per plot stem: its texts, and its bar heights (the figures are captured, not saved)."""
    seen: dict[str, Any] = {}

    def capture(fig: Figure, out: Path, stem: str) -> list[Path]:
        texts = [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]
        bars = [p.get_height() for ax in fig.axes for p in ax.patches if hasattr(p, "get_height")]
        seen[stem] = {"texts": texts, "bars": bars}
        return [out / f"{stem}.png"]

    monkeypatch.setattr(plots, "_save", capture)
    plots.write_plots(result, tmp_path)
    return seen


def test_plots_use_display_names_and_draw_a_missing_bucket_as_missing(
    main_run: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    named = analyze_run(main_run, bootstrap_samples=0, display_names={"vendor-b/beta": "Beta Model"})
    seen = _figure_texts(monkeypatch, named, tmp_path)
    assert "Beta Model" in seen["buckets"]["texts"] and "Beta Model" in seen["pass_at_1"]["texts"]
    assert BETA not in seen["buckets"]["texts"]
    # Beta has no binary question (q3 excluded): 7 bars, not 8 with a 0.0, and an "n/a" mark.
    assert named.models[BETA]["exam_avg"]["binary"] is None
    assert len(seen["buckets"]["bars"]) == 7
    assert seen["buckets"]["texts"].count("n/a") == 1


def test_no_cost_plot_without_cost(main_run: Path, tmp_path: Path) -> None:
    bare = analyze_run(main_run, bootstrap_samples=0)
    assert NO_COST_NOTE in bare.notes
    written = write_analysis(bare, tmp_path / "out")
    names = {p.name for p in written}
    assert "cost_vs_composite.png" not in names and "buckets.png" in names
    assert (
        NO_COST_NOTE in json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))["notes"]
    )


def test_error_bars_come_from_the_bootstrap(
    main_run: Path, prices_file: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    priced = analyze_run(main_run, prices=load_prices(prices_file), bootstrap_samples=50, seed=3)
    captured: list[Any] = []
    real = plots.plt.Axes.errorbar

    def spy(self: Any, x: Any, y: Any, *args: Any, **kwargs: Any) -> Any:
        captured.append((list(y), kwargs.get("yerr")))
        return real(self, x, y, *args, **kwargs)

    monkeypatch.setattr(plots.plt.Axes, "errorbar", spy)
    plots.write_plots(priced, tmp_path)
    lo, hi = priced.models[ALPHA]["ci"]["composite_accuracy"]
    value = priced.models[ALPHA]["composite_accuracy"]
    assert ([value], [[pytest.approx(value - lo)], [pytest.approx(hi - value)]]) in [
        (y, err) for y, err in captured
    ]
