"""``oracleproto conformance``: our harness's requests against another harness's captured traffic."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_FAILED
from oracleproto.cli.experiment import env_file_option, experiment_options, load_experiment, resolve_dataset
from oracleproto.conformance.session import conformance_settings, run_conformance
from oracleproto.runner.execute import RunSummary


@click.command("conformance")
@click.argument("capture", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option(
    "--dataset", default=None, help="Source DB the capture's questions come from (default: SOURCE_DB)."
)
@env_file_option
@experiment_options
@click.option(
    "--keep",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Keep the conformance run under this runs root (default: a scratch folder, removed after).",
)
@click.option(
    "--shown", type=click.IntRange(0), default=10, show_default=True, help="Differences shown per channel."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
def conformance_command(
    *,
    capture: Path,
    dataset: str | None,
    env_file: Path,
    config_path: Path | None,
    models_option: str | None,
    limit: int | None,
    profile_path: str | None,
    keep: Path | None,
    shown: int,
    as_json: bool,
) -> None:
    """Run our harness (with --profile, the run settings and --dataset) against CAPTURE, another
    harness's recorded HTTP traffic, and report per channel how many request bodies are byte-identical.

    Each of our requests is answered with the captured response at the same logical position
    (model, question, sample, step for the LLM; query and end date for search; URL and cutoff for
    the detector). Exit 0 only when every request matches and every captured exchange was used.
    """
    experiment = load_experiment(env_file, config_path, models_option, limit, profile_path)
    source_db = resolve_dataset(dataset, experiment.settings)
    settings = conformance_settings(experiment.settings, source_db)
    scratch = None if keep is not None else Path(tempfile.mkdtemp(prefix="oracleproto-conformance-"))
    runs_root = keep if keep is not None else scratch
    assert runs_root is not None
    try:
        result = asyncio.run(run_conformance(capture, settings, source_db, runs_root))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    report = result.report
    if as_json:
        click.echo(
            json.dumps({**report.as_dict(), "run": _run_facts(result.summary, keep)}, ensure_ascii=False)
        )
    else:
        click.echo(report.render_text(limit=shown))
        errors = ", ".join(f"{k}={v}" for k, v in sorted(result.summary.errors.items())) or "none"
        kept = f"; kept in {result.summary.run.root}" if keep is not None else ""
        click.echo(f"our run: {result.summary.slots_run} samples, call errors: {errors}{kept}", err=True)
    if not report.ok:
        sys.exit(EXIT_FAILED)


def _run_facts(summary: RunSummary, keep: Path | None) -> dict[str, object]:
    kept = str(summary.run.root) if keep is not None else None
    return {"samples": summary.slots_run, "call_errors": dict(summary.errors), "kept": kept}
