"""``oracleproto dataset audit DB``: construction-time audit aids (App. B.1), Markdown and JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_INVALID
from oracleproto.dataset.admission import parse_training_cutoff
from oracleproto.dataset.construction_audit import audit_report, render_markdown
from oracleproto.dataset.demo import demo_db_path
from oracleproto.dataset.loader import load_questions
from oracleproto.errors import ConfigError, OracleprotoError
from oracleproto.primitives.fileio import atomic_write_text
from oracleproto.primitives.oserrors import cannot_write


def parse_cutoffs(text: str | None) -> dict[str, str]:
    """``slug=date,…`` → ``{slug: date}``; a bad entry is a ``ConfigError``."""
    cutoffs: dict[str, str] = {}
    for part in (p.strip() for p in (text or "").split(",") if p.strip()):
        slug, sep, value = part.partition("=")
        if not sep or not slug.strip() or not value.strip():
            raise ConfigError(
                f"--cutoffs entry {part!r} is not slug=YYYY-MM[-DD]; e.g. --cutoffs m1=2025-09,m2=2026-01-27"
            )
        parse_training_cutoff(value.strip())  # fails early with the cutoff rule in the message
        cutoffs[slug.strip()] = value.strip()
    return cutoffs


@click.command("audit")
@click.argument("db", metavar="DB")
@click.option(
    "--table", default=None, help="Questions table (default: the one table with the seven columns)."
)
@click.option("--cutoffs", default=None, help="Admissibility per model: slug=YYYY-MM[-DD],...")
@click.option(
    "--delta-days", type=click.IntRange(0), default=1, show_default=True, help="Prediction offset δ."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of Markdown.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Write to a file.")
def audit_command(
    *, db: str, table: str | None, cutoffs: str | None, delta_days: int, as_json: bool, out: Path | None
) -> None:
    """Flag rows a human should review before freezing DB (deterministic Markdown or JSON)."""
    path = demo_db_path() if db == "demo" else Path(db)
    try:
        questions = load_questions(path, table)
        report = audit_report(
            questions, db_name=path.name, cutoffs=parse_cutoffs(cutoffs), delta_days=delta_days
        )
    except OracleprotoError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INVALID)
    text = (
        json.dumps(report, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
        if as_json
        else render_markdown(report)
    )
    if out is None:
        click.echo(text, nl=False)
        return
    try:
        atomic_write_text(out, text)
    except OSError as exc:
        click.echo(f"error: {cannot_write(out, exc)}", err=True)
        sys.exit(EXIT_INVALID)
    click.echo(f"wrote {out}")
