"""``oracleproto plan`` (= ``run --dry-run``): what a run will ask and may cost, offline."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import click

from oracleproto.analysis.prices import PriceTable, load_prices
from oracleproto.cli.experiment import env_file_option, experiment_options, load_experiment, samples_option
from oracleproto.errors import ConfigError
from oracleproto.runner.spend_calibration import Calibration, load_calibration
from oracleproto.runner.spend_plan import Bound, SpendPlan, build_spend_plan
from oracleproto.settings.model import Settings


def _n(value: float) -> str:
    return f"{round(value):,}"


def _pair(bound: Bound) -> str:
    return f"{_n(bound.expected)} / {_n(bound.upper)}"


def _usd(bound: Bound | None) -> str:
    return "n/a" if bound is None else f"{bound.expected:,.2f} / {bound.upper:,.2f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))]).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _detector_shown(detector: str | None) -> str:
    """The leak filter as the plan's first line names it: off, its model, or on without one."""
    if detector is None:
        return "off"
    return detector or "on, but LEAK_DETECTOR_MODEL is not set (a live run refuses this)"


def _plan_heading(plan: SpendPlan) -> list[str]:
    """The plan's first lines: what it covers, its harness profile, where its expectations come from."""
    limit = f", QUESTION_LIMIT={plan.question_limit}" if plan.question_limit else ""
    lines = [
        f"plan: {plan.question_count} questions from {plan.source_db}{limit}; n = {plan.sampling_n} samples; "
        f"grid R={plan.r_list} C={plan.c_list}; detector: {_detector_shown(plan.detector)}",
        "no network call was made and nothing was written (values: expected / upper bound)",
    ]
    if plan.harness_profile is not None:
        found = plan.harness_profile
        lines.insert(1, f"harness profile: {found['name']} ({found['fingerprint']})")
    if plan.calibration is not None:
        cal = plan.calibration
        pooled = cal["pooled_for"]
        lines.append(
            f"expected values calibrated from run {cal['run_id']} ({cal['samples']} samples measured; "
            f"models measured: {', '.join(cal['models']) or 'none'}"
            + (f"; pooled averages for: {', '.join(pooled)}" if pooled else "")
            + ")"
        )
    return lines


def _plan_table(plan: SpendPlan) -> list[str]:
    """The per-model table of calls, tokens and USD, with its total row."""
    header = [
        "model",
        "admitted",
        "samples",
        "LLM calls",
        "searches",
        "detector calls",
        "tokens in",
        "tokens out",
        "USD",
    ]
    rows = []
    for cell in plan.cells:
        tokens_in = cell.llm_prompt_tokens + cell.detector_prompt_tokens
        tokens_out = cell.llm_completion_tokens + cell.detector_completion_tokens
        rows.append(
            [
                cell.model,
                f"{cell.admitted}/{cell.questions}",
                str(cell.samples),
                _pair(cell.llm_calls),
                _pair(cell.search_calls),
                _pair(cell.detector_calls),
                _pair(tokens_in),
                _pair(tokens_out),
                _usd(cell.total_usd()),
            ]
        )
    total_in = plan.total("llm_prompt_tokens") + plan.total("detector_prompt_tokens")
    total_out = plan.total("llm_completion_tokens") + plan.total("detector_completion_tokens")
    rows.append(
        [
            "total",
            "",
            str(sum(c.samples for c in plan.cells)),
            _pair(plan.total("llm_calls")),
            _pair(plan.total("search_calls")),
            _pair(plan.total("detector_calls")),
            _pair(total_in),
            _pair(total_out),
            _usd(plan.total_usd()),
        ]
    )
    return _table(header, rows)


def _plan_notes(plan: SpendPlan) -> list[str]:
    """The plan's last lines: exclusions, the price table and what it leaves out, the assumptions."""
    lines = []
    if plan.exclusions:
        lines.append("excluded before any call:")
        for ex in plan.exclusions:
            shown = ", ".join(ex.question_ids[:5]) + (", …" if len(ex.question_ids) > 5 else "")
            lines.append(
                f"  {ex.model}: {len(ex.question_ids)} question(s), {ex.reason.replace('_', ' ')} "
                f"(training cutoff {ex.training_cutoff}): {shown}"
            )
    else:
        lines.append("excluded before any call: none")
    prices = plan.prices or "none (pass --prices FILE or set PRICES_FILE)"
    lines.append(f"prices: {prices}")
    if plan.unpriced:
        lines.append("  not priced (left out of USD): " + "; ".join(plan.unpriced))
    lines.append("assumptions:")
    lines += [f"  - {a}" for a in plan.assumptions]
    return lines


def render_plan(plan: SpendPlan) -> str:
    """The plan as the terminal shows it: counts, calls, tokens, USD, exclusions, assumptions."""
    lines = [*_plan_heading(plan), "", *_plan_table(plan), "", *_plan_notes(plan)]
    return "\n".join(lines) + "\n"


#: ``--prices example``: the documented example price table shipped with the package.
EXAMPLE_PRICES = "example"


def example_prices_path() -> Path:
    """The bundled example price table (``oracleproto/data/prices.example.json``)."""
    return Path(str(resources.files("oracleproto") / "data" / "prices.example.json"))


def plan_prices(path: Path | None, settings: Settings) -> tuple[PriceTable | None, str | None]:
    """The price table (``--prices``, else ``PRICES_FILE``; ``example`` is the bundled one) and its name."""
    chosen = path if path is not None else settings.analysis.prices_file
    if chosen is None:
        return None, None
    if str(chosen) == EXAMPLE_PRICES and not chosen.exists():
        chosen = example_prices_path()
    return load_prices(chosen), chosen.name


def calibration_run(ref: str, runs_root: Path) -> Calibration:
    """``--calibrate RUN``: any RUN form (``cli/runref.py``) but a bundle, measured read-only."""
    from oracleproto.cli.runref import resolve_run

    return load_calibration(resolve_run(ref, runs_root).path)


def show_plan(
    settings: Settings,
    source_db: Path,
    prices_path: Path | None,
    *,
    as_json: bool,
    calibrate: str | None = None,
    runs_root: Path | None = None,
) -> None:
    """Print the plan of a run (text or JSON); reads files only."""
    root = runs_root or settings.run.runs_root
    calibration = None if calibrate is None else calibration_run(calibrate, root)
    prices, name = plan_prices(prices_path, settings)
    plan = build_spend_plan(settings, source_db, prices=prices, prices_name=name, calibration=calibration)
    if as_json:
        click.echo(json.dumps(plan.to_json(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        click.echo(render_plan(plan), nl=False)


prices_option = click.option(
    "--prices",
    "prices_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Price table (JSON or CSV, the format `report --prices` takes; default: PRICES_FILE; "
    "'example': the bundled example, docs/design/architecture.md).",
)
calibrate_option = click.option(
    "--calibrate",
    "calibrate",
    default=None,
    metavar="RUN",
    help="Take the expected calls, tokens and cost per call from an earlier (pilot) run (a run "
    "directory, run id, id prefix, run name or 'demo'); read only. The upper bounds stay the budgets'.",
)


@click.command("plan")
@click.option("--dataset", default=None, help="Source DB path, or 'demo' (default: SOURCE_DB or the demo).")
@env_file_option
@experiment_options
@samples_option
@prices_option
@calibrate_option
@click.option(
    "--runs-root",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where --calibrate looks a run id, id prefix or name up (default: RUNS_ROOT, else ./runs).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.option(
    "--check-models",
    is_flag=True,
    help="Also ask each endpoint for its model list (GET {base}/models: the only network call plan "
    "makes) and check every configured slug against it; exit 2 if one is not listed.",
)
def plan_command(
    *,
    dataset: str | None,
    env_file: Path,
    config_path: Path | None,
    models_option: str | None,
    limit: int | None,
    samples: int | None,
    profile_path: str | None,
    prices_path: Path | None,
    calibrate: str | None,
    runs_root: Path | None,
    as_json: bool,
    check_models: bool,
) -> None:
    """Show what a run would ask and may cost (same as `run --dry-run`); no network, no files written.

    With --check-models, one request per endpoint asks for its model list.
    """
    from oracleproto.cli.experiment import resolve_dataset

    experiment = load_experiment(env_file, config_path, models_option, limit, profile_path, samples=samples)
    show_plan(
        experiment.settings,
        resolve_dataset(dataset, experiment.settings),
        prices_path,
        as_json=as_json,
        calibrate=calibrate,
        runs_root=runs_root,
    )
    if check_models:
        show_model_check(experiment.settings)


def show_model_check(settings: Settings) -> None:
    """``plan --check-models``: each configured slug against its endpoint's list (stderr, so
    ``--json`` stays one object); a slug no list holds exits 2."""
    import asyncio

    from oracleproto.primitives.redact import redact_urls_in_text
    from oracleproto.providers.model_check import check_models

    check = asyncio.run(check_models(settings))
    if not check.endpoints:
        raise ConfigError("--check-models: no model to check (set LLM_BASE_URL and MODELS)")
    click.echo("model check (GET {base}/models; the only network call plan makes):", err=True)
    for line in check.lines():
        click.echo(redact_urls_in_text(line), err=True)
    error = check.error()
    if error is not None:
        raise error
