"""``oracleproto verify``, ``oracleproto bundle export|import`` and ``oracleproto demo record``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_FAILED
from oracleproto.cli.runref import (
    RUN_EPILOG,
    RUN_OR_BUNDLE_EPILOG,
    RunRef,
    label_suffix,
    resolve_run,
    run_argument,
    runs_root_option,
)
from oracleproto.cli.store_option import from_store_option
from oracleproto.verify.attest import write_attestation
from oracleproto.verify.bundle import export_bundle, import_bundle
from oracleproto.verify.demo import fetch_demo, record_demo
from oracleproto.verify.findings import VerifyReport
from oracleproto.verify.target import verify_path


def _stage(name: str) -> None:
    click.echo(f"· {name}", err=True)


def resolve_run_ref(ref: str, runs_root: Path | None) -> Path:
    """The run directory or bundle file ``ref`` names (``cli/runref.py``: every RUN form)."""
    return resolve_run(ref, runs_root, bundles=True).path


def print_report(report: VerifyReport) -> None:
    """The verdict table: one line per check, failures with their location."""
    width = max(len(c.what) for c in report.checks)
    for check in report.checks:
        line = f"  {check.status:<4}  {check.what.ljust(width)}"
        if check.detail and check.status != "pass":
            line += f"  {check.detail}"
        click.echo(line.rstrip())
    counts = {s: sum(c.status == s for c in report.checks) for s in ("pass", "FAIL", "skip", "n/a")}
    verdict = "VERIFIED" if report.ok else "NOT VERIFIED"
    not_applicable = f", {counts['n/a']} not applicable" if counts["n/a"] else ""
    click.echo(
        f"{verdict}: {report.target}{label_suffix(Path(report.target))} "
        f"({counts['pass']} passed, {counts['FAIL']} failed, {counts['skip']} skipped{not_applicable})"
    )


DATASET_HELP = (
    "Source DB the run was recorded on (default: a bundle's own, else the demo dataset if its hash fits)."
)


@click.command("verify", epilog=RUN_OR_BUNDLE_EPILOG)
@run_argument(bundles=True)
@click.option(
    "--dataset", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None, help=DATASET_HELP
)
@runs_root_option
@click.option(
    "--write-attestation", is_flag=True, help="When every check passes, (re)write attestation.json."
)
@click.option("--quiet", is_flag=True, help="Do not print the stages to stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object (nothing else).")
@from_store_option
def verify_command(
    *,
    run: RunRef,
    dataset: Path | None,
    runs_root: Path | None,
    write_attestation: bool,
    quiet: bool,
    as_json: bool,
    from_store: str | None,
) -> None:
    """Verify RUN offline, without re-executing."""
    if write_attestation and run.kind in ("store", "demo"):
        what = "pull it with `store pull` first" if run.kind == "store" else "copy it with `demo fetch` first"
        raise click.UsageError(f"--write-attestation seals a run you own; {what}")
    if from_store is not None:
        from oracleproto.cli.store import run_from_store

        pulled = run_from_store(from_store, run.text, quiet=quiet)
        path, dataset = pulled.run_dir, dataset or pulled.dataset
    else:
        path = run.path
    report = verify_path(path, dataset=dataset, progress=(lambda _: None) if quiet else _stage)
    if as_json:
        _verify_json(report, path, write_attestation)
        return
    print_report(report)
    if not report.ok:
        sys.exit(EXIT_FAILED)
    if write_attestation:
        if path.is_file():
            raise click.UsageError("--write-attestation needs a run directory, not a bundle")
        click.echo(f"wrote {write_attestation_file(path)}")


def _verify_json(report: VerifyReport, path: Path, attest: bool) -> None:
    """``verify --json``: the document, then exit 1 when a check failed (as the text form)."""
    from oracleproto.cli.jsonout import emit, verify_document

    if attest and report.ok and path.is_file():
        raise click.UsageError("--write-attestation needs a run directory, not a bundle")
    written = write_attestation_file(path) if attest and report.ok else None
    emit("verify", verify_document(report, written))
    if not report.ok:
        sys.exit(EXIT_FAILED)


def write_attestation_file(run_root: Path) -> Path:
    """Seal a verified run directory."""
    return write_attestation(run_root)


@click.group("bundle")
def bundle_group() -> None:
    """Publishable, self-contained archives of a run."""


@bundle_group.command("export", epilog=RUN_EPILOG)
@run_argument()
@click.argument("out", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--dataset",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="Source DB to publish with the run (default: the demo dataset, when the run's hash is its).",
)
@click.option("--no-dataset", is_flag=True, help="Publish only the dataset's digest, not the source DB.")
@runs_root_option
def bundle_export(
    *, run: RunRef, out: Path, dataset: Path | None, no_dataset: bool, runs_root: Path | None
) -> None:
    """Verify RUN, scan it for secrets, and write a deterministic OUT.tar.gz."""
    written = export_bundle(run.path, out, dataset=dataset, include_dataset=not no_dataset, progress=_stage)
    click.echo(str(written))


@bundle_group.command("import")
@click.argument("bundle", type=click.Path(path_type=Path, dir_okay=False))
@click.argument("dest", type=click.Path(path_type=Path, file_okay=False))
@from_store_option
def bundle_import(*, bundle: Path, dest: Path, from_store: str | None) -> None:
    """Check every member of BUNDLE against its sha256 and extract it into DEST."""
    if from_store is not None:
        # The same layout and checks as `store pull` (DEST/run/<id>/, DEST/dataset/): it is that command.
        from oracleproto.cli.store import pull_command

        click.get_current_context().invoke(pull_command, ref=str(bundle), dest=dest, url=from_store)
        return
    if not bundle.is_file():
        raise click.BadParameter(f"Path {str(bundle)!r} does not exist.", param_hint="'BUNDLE'")
    imported = import_bundle(bundle, dest)
    click.echo(f"run: {imported.run_dir}")
    if imported.dataset is not None:
        click.echo(f"dataset: {imported.dataset}")
    click.echo(
        f"replay it with: oracleproto replay {imported.run_dir}"
        + (f" --dataset {imported.dataset}" if imported.dataset is not None else " --dataset <source DB>")
    )


@click.group("demo")
def demo_group() -> None:
    """The bundled demo run."""


@demo_group.command("record")
@click.option(
    "--repo",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=Path("."),
    show_default=True,
    help="Repository root: the run goes to cassettes/demo/, its tables to golden/demo/.",
)
@click.option("--no-progress", is_flag=True, help="Never draw the progress display.")
def demo_record(*, repo: Path, no_progress: bool) -> None:
    """Re-record the demo run against the simulator (replaces cassettes/demo and golden/demo)."""
    run = record_demo(repo, progress=_stage, show_progress=not no_progress)
    click.echo(str(run))


@demo_group.command("fetch")
@click.option(
    "--dir",
    "dest",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("."),
    show_default=True,
    help="Folder to put it in: the run goes to DIR/cassettes/demo/<run id>, as in a clone.",
)
@click.option("--force", is_flag=True, help="Replace an existing copy.")
def demo_fetch(*, dest: Path, force: bool) -> None:
    """Copy the demo run out of the installed package into DIR/cassettes/demo/ (for pip users)."""
    run = fetch_demo(dest, force=force)
    click.echo(str(run))
    click.echo(f"replay it with: oracleproto replay {run}   (or simply: oracleproto replay demo)", err=True)
