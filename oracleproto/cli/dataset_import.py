"""``oracleproto dataset import SOURCE IN… OUT``: run one importer and print its report."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_INVALID
from oracleproto.dataset.demo import demo_templates
from oracleproto.dataset.importers import (
    SOURCES,
    ImportSettings,
    SourceBatch,
    forecastbench,
    futurex,
    oracleproto_db,
    run_import,
    table,
)
from oracleproto.dataset.importers.pipeline import existing_output_reason
from oracleproto.dataset.importers.records import parse_source_date
from oracleproto.dataset.importers.report import render_report
from oracleproto.dataset.rows import read_templates_file
from oracleproto.errors import DatasetError, DatasetProblem, OracleprotoError


def _usage(reason: str) -> DatasetError:
    return DatasetError("dataset import", [DatasetProblem(None, "usage", reason)])


def _levels(text: str) -> list[int]:
    try:
        levels = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise _usage(f"--levels {text!r} is not a comma-separated list of integers (e.g. 1,2)") from None
    if not levels:
        raise _usage("--levels is empty; pass e.g. --levels 1,2")
    return levels


def _templates(path: Path | None) -> tuple[dict[str, str], str]:
    if path is None:
        return demo_templates(), "oracleproto default templates"
    value = read_templates_file(path)
    if not isinstance(value, dict):
        raise DatasetError(str(path), [DatasetProblem(None, "templates", "not a JSON object")])
    return {str(k): v for k, v in value.items()}, f"--templates {path.name}"


def _batch(
    source: str, inputs: list[Path], opts: dict[str, object], templates_file: Path | None
) -> SourceBatch:
    templates, origin = _templates(templates_file)
    if source == "futurex-past":
        return futurex.batch(
            inputs,
            levels=_levels(str(opts["levels"])),
            templates=templates,
            origin=origin,
            # click.Choice admitted only the two names; this narrows the text to the rule type.
            choice_type_rule="prompt" if opts["choice_type_rule"] == "prompt" else "answers",
        )
    if source == "forecastbench":
        return forecastbench.batch(
            inputs,
            keep_composed=bool(opts["keep_composed"]),
            with_criteria=bool(opts["with_criteria"]),
            templates=templates,
            origin=origin,
        )
    if source == "oracleproto-db":
        if len(inputs) != 1:
            raise _usage(f"oracleproto-db takes exactly one source DB, got {len(inputs)}")
        in_table = opts["in_table"]
        return oracleproto_db.batch(
            inputs[0], table=str(in_table) if in_table else None, default_templates=templates
        )
    mapping_text = opts["mapping"]
    if not mapping_text:
        raise _usage(
            "the table importer needs --map, e.g. --map id=qid,event=title,answer=truth,end_time=date"
        )
    return table.batch(
        inputs,
        mapping=table.parse_mapping(str(mapping_text)),
        options_sep=str(opts["options_sep"]),
        templates=templates,
        origin=origin,
    )


@click.command("import")
@click.argument("source", metavar="SOURCE", type=click.Choice(SOURCES))
@click.argument("paths", metavar="IN... OUT", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--levels", default="1,2", show_default=True, help="futurex-past: levels to keep.")
@click.option(
    "--choice-type-rule",
    type=click.Choice(futurex.CHOICE_TYPE_RULES),
    default=futurex.DEFAULT_CHOICE_TYPE_RULE,
    show_default=True,
    help="futurex-past: when a multiple-choice row is 'multi'. answers: its ground truth has two or "
    "more answers (the earlier release's rule); prompt: also when the prompt asks for all correct "
    "options. Recorded in the import report.",
)
@click.option("--min-end-date", default=None, help="Drop rows resolving before this date (YYYY-MM-DD).")
@click.option("--keep-composed", is_flag=True, help="forecastbench: keep combined questions.")
@click.option("--with-criteria", is_flag=True, help="forecastbench: add resolution criteria and background.")
@click.option(
    "--map", "mapping", default=None, help="table: field=column,... (id, event, options, answer, ...)."
)
@click.option(
    "--options-sep", default="|", show_default=True, help="table: separator of options given as text."
)
@click.option("--in-table", default=None, help="oracleproto-db: questions table of the input DB.")
@click.option("--table", "out_table", default="questions", show_default=True, help="Questions table of OUT.")
@click.option(
    "--name", "dataset_name", default=None, help="dataset_name in dataset_metadata (default: table)."
)
@click.option(
    "--templates",
    "templates_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSON object with the eight prompt template keys (default: oracleproto's own templates).",
)
@click.option("--strict", is_flag=True, help="Abort on any malformed row instead of dropping it.")
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
def import_command(
    *,
    source: str,
    paths: tuple[Path, ...],
    min_end_date: str | None,
    out_table: str,
    dataset_name: str | None,
    templates_file: Path | None,
    strict: bool,
    force: bool,
    **opts: object,
) -> None:
    """Import IN files of SOURCE into a source DB at OUT, plus OUT.report.json (deterministic).

    SOURCE is futurex-past (Parquet/JSON/JSONL), forecastbench (question set + resolution set
    JSON), oracleproto-db (a source DB of any OracleProto version) or table (any CSV/JSONL/JSON/
    Parquet with --map). Bad rows are dropped with a reason unless --strict.
    """
    try:
        if len(paths) < 2:
            raise _usage("pass at least one input file and the output DB path (IN... OUT)")
        *inputs, out = paths
        if min_end_date is not None and parse_source_date(min_end_date) is None:
            raise _usage(f"--min-end-date {min_end_date!r} is not a date; use YYYY-MM-DD")
        if out.exists() and not force:
            raise DatasetError(str(out), [DatasetProblem(None, "file", existing_output_reason(out))])
        batch = _batch(source, list(inputs), opts, templates_file)
        settings = ImportSettings(
            table=out_table,
            dataset_name=dataset_name,
            min_end_date=parse_source_date(min_end_date) if min_end_date else None,
            strict=strict,
            force=force,
        )
        result = run_import(batch, out, settings)
    except OracleprotoError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INVALID)
    click.echo(render_report(result.report))
    click.echo(f"wrote {result.path} and {result.report_path.name}")
