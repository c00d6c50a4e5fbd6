"""``oracleproto audit sample|import|score|compare`` (paper §4.3, Table 6, App. B.6)."""

from __future__ import annotations

from pathlib import Path

import click

from oracleproto.cli.runref import RUN_EPILOG, RunRef, run_argument, runs_root_option
from oracleproto.leakaudit.compare import compare_rows, render
from oracleproto.leakaudit.importer import import_labels
from oracleproto.leakaudit.items import ITEMS_FILE, AuditError, items_text, write_audit
from oracleproto.leakaudit.labels import annotators
from oracleproto.leakaudit.report import FORMATS, rate_lines, table6_md, write_outputs
from oracleproto.leakaudit.sample import SampleOptions, sample_audit
from oracleproto.leakaudit.score import score_audit
from oracleproto.primitives.fileio import atomic_write_text

_AUDIT_DIR = click.Path(exists=True, file_okay=False, path_type=Path)


def _names(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = tuple(v.strip() for v in value.split(",") if v.strip())
    return names or None


@click.command("sample", epilog=RUN_EPILOG)
@run_argument()
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Audit directory to write audit.jsonl and audit.json into.")  # fmt: skip
@click.option("--models", default=None, help="Comma-separated model slugs (default: every model of the run).")
@click.option("--questions", type=click.IntRange(1), default=None,
              help="The first N questions in the run's order (default: all).")  # fmt: skip
@click.option("--per-item", type=click.IntRange(1), default=1, show_default=True,
              help="Results drawn from each test item (model, question, sample).")  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the uniform draw.")
@runs_root_option
def sample_command(
    *, run: RunRef, out: Path, models: str | None, questions: int | None, per_item: int, seed: int,
    runs_root: Path | None,
) -> None:  # fmt: skip
    """Draw the audit set of RUN: one result per test item."""
    from oracleproto.store import RunDir

    if out.exists() and not out.is_dir():
        raise AuditError(f"--out {out}: is a file; give a folder for the audit set")
    run_dir = RunDir.open(run.path)
    options = SampleOptions(models=_names(models), questions=questions, per_item=per_item, seed=seed)
    items, meta, problems = sample_audit(run_dir, options)
    text = items_text(items)
    existing = out / ITEMS_FILE
    if annotators(out) and existing.is_file() and existing.read_text(encoding="utf-8") != text:
        raise AuditError(
            f"{out}: holds labels for a different audit set; sampling again would orphan them. "
            "Choose a new --out folder (or move the labels/ folder away first)"
        )
    write_audit(out, text, meta)
    counts = meta["counts"]
    click.echo(
        f"{counts['audit_items']} audit items from {counts['test_items']} test items "
        f"({counts['candidates']} candidates; {counts['test_items_without_candidates']} items without "
        f"any search result) → {existing}"
    )
    for problem in problems:
        click.echo(f"skipped a test item whose stored sample cannot be read: {problem}", err=True)


@click.command("import")
@click.argument("audit_dir", metavar="DIR", type=_AUDIT_DIR)
@click.argument("csv_file", metavar="FILE.csv", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--annotator", required=True, help="Whose labels these are (names DIR/labels/<annotator>.jsonl)."
)
def import_command(*, audit_dir: Path, csv_file: Path, annotator: str) -> None:
    """Import labels from a spreadsheet with columns item_id,label[,note]; a bad row imports nothing."""
    count = import_labels(audit_dir, csv_file, annotator)
    click.echo(f"imported {count} labels for {annotator} into {audit_dir / 'labels'}")


@click.command("score")
@click.argument("audit_dir", metavar="DIR", type=_AUDIT_DIR)
@click.option("--format", "fmt", type=click.Choice([*FORMATS, "all"]), default="all", show_default=True,
              help="Which Table 6 files to write (audit_summary.json is always written).")  # fmt: skip
@click.option("--adjudicate", default=None,
              help="agree-only (two annotators' default), first, second, or an annotator.")  # fmt: skip
@click.option(
    "--annotators", "names", default=None, help="The two annotators to score (default: all, at most two)."
)
def score_command(*, audit_dir: Path, fmt: str, adjudicate: str | None, names: str | None) -> None:
    """Score the labels in DIR against the detector: Table 6, FN/N and 1 − recall with Wilson CIs."""
    score = score_audit(audit_dir, annotators=_names(names), adjudicate=adjudicate)
    written = write_outputs(audit_dir, score, FORMATS if fmt == "all" else (fmt,))
    summary = score.summary()
    click.echo(table6_md(summary) if fmt in ("all", "md") else "\n".join(rate_lines(summary)), nl=False)
    if fmt not in ("all", "md"):
        click.echo()
    click.echo("wrote " + ", ".join(p.name for p in written))


@click.command("compare")
@click.argument("dirs", metavar="DIR1 DIR2 …", nargs=-1, required=True, type=_AUDIT_DIR)
@click.option(
    "--names", default=None, help="Comma-separated scheme names, one per DIR (default: from the runs)."
)
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="md", show_default=True,
              help="Format of the comparison table printed (and written with --out).")  # fmt: skip
@click.option("--adjudicate", default=None, help="As for `audit score`, applied to every DIR.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also write the table to this file.")  # fmt: skip
def compare_command(
    *, dirs: tuple[Path, ...], names: str | None, fmt: str, adjudicate: str | None, out: Path | None
) -> None:
    """Residual leakage per scheme (none, date filter, date filter + detector), one audit DIR each."""
    labels = _names(names)
    if labels is not None and len(labels) != len(dirs):
        raise click.UsageError(f"--names gives {len(labels)} names for {len(dirs)} audit folders")
    text = render(compare_rows(dirs, names=labels, adjudicate=adjudicate), fmt)
    if out is not None:
        atomic_write_text(out, text)
    click.echo(text, nl=False)


COMMANDS = (sample_command, import_command, score_command, compare_command)
