"""``oracleproto dataset``: validate, describe and build source DBs."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_INVALID
from oracleproto.dataset.builder import build_dataset
from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.info import db_info, render_table, summarize
from oracleproto.dataset.loader import validate_db
from oracleproto.dataset.rows import read_templates_file
from oracleproto.errors import OracleprotoError


@contextmanager
def invalid_input_exits() -> Iterator[None]:
    """Report a known error as ``error: …`` (one line per dataset problem) and exit 2."""
    try:
        yield
    except OracleprotoError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INVALID)


def resolve_db(value: str) -> Path:
    """The DB path for a command argument: ``demo`` means the packaged demo DB."""
    return demo_db_path() if value == "demo" else Path(value)


@click.group("dataset")
def dataset() -> None:
    """Validate, describe and build OracleProto source datasets."""


@dataset.command("validate")
@click.argument("db", metavar="DB")
@click.option(
    "--table", default=None, help="Questions table (default: the one table with the seven columns)."
)
def validate_command(db: str, table: str | None) -> None:
    """Check every row and the prompt templates of DB; exit 2 listing every problem."""
    with invalid_input_exits():
        report = validate_db(resolve_db(db), table)
    if not report.ok:
        for problem in report.problems:
            click.echo(str(problem), err=True)
        click.echo(
            f"{db}: {len(report.problems)} problem(s) in table {report.table} ({report.row_count} rows)",
            err=True,
        )
        sys.exit(EXIT_INVALID)
    for warning in report.warnings:
        click.echo(str(warning), err=True)
    click.echo(f"{len(report.questions)} valid rows in table {report.table}")
    click.echo(render_table(summarize(report.questions)))


@dataset.command("info")
@click.argument("db", metavar="DB")
@click.option(
    "--table", default=None, help="Questions table (default: the one table with the seven columns)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of the text table.")
def info_command(db: str, table: str | None, as_json: bool) -> None:
    """Counts by question type x answering mode (paper Table 1), date range and hashes of DB."""
    with invalid_input_exits():
        info = db_info(resolve_db(db), table)
    if as_json:
        click.echo(json.dumps(info.as_json(), indent=2, sort_keys=True))
    else:
        click.echo(info.render_text())


@dataset.command("build")
@click.argument("rows", metavar="IN", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("out", metavar="OUT", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--templates",
    "templates_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSON object with the eight prompt template keys (default: the demo's own templates).",
)
@click.option("--table", default="questions", show_default=True, help="Name of the questions table.")
@click.option(
    "--name", "dataset_name", default=None, help="dataset_name in dataset_metadata (default: table)."
)
@click.option(
    "--imported-at", default=None, help="imported_at_utc to record (default: latest end_time, midnight UTC)."
)
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
def build_command(
    *,
    rows: Path,
    out: Path,
    templates_file: Path | None,
    table: str,
    dataset_name: str | None,
    imported_at: str | None,
    force: bool,
) -> None:
    """Build a source DB at OUT from JSONL or CSV rows IN (deterministic, atomic)."""
    with invalid_input_exits():
        templates = read_templates_file(templates_file) if templates_file is not None else None
        result = build_dataset(
            rows,
            out,
            templates=templates,
            table=table,
            dataset_name=dataset_name,
            imported_at_utc=imported_at,
            force=force,
        )
    click.echo(f"wrote {result.path}: {result.row_count} rows in table {result.table}")
    click.echo(f"source_db_hash: {result.source_db_hash}")


def _register_subcommands() -> None:
    # Imported here, not at the top: those modules import this one's helpers.
    from oracleproto.cli.dataset_audit import audit_command
    from oracleproto.cli.dataset_import import import_command

    dataset.add_command(import_command)
    dataset.add_command(audit_command)


_register_subcommands()
