"""``oracleproto verify``, ``oracleproto bundle export|import`` and ``oracleproto demo record``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_FAILED
from oracleproto.cli.store_option import from_store_option
from oracleproto.settings import load_settings
from oracleproto.store import RunDir
from oracleproto.verify.attest import write_attestation
from oracleproto.verify.bundle import export_bundle, import_bundle
from oracleproto.verify.demo import fetch_demo, find_demo_run, record_demo
from oracleproto.verify.findings import VerifyReport
from oracleproto.verify.run import verify_path


def _stage(name: str) -> None:
    click.echo(f"· {name}", err=True)


def resolve_run_ref(ref: str, runs_root: Path | None) -> Path:
    """``demo`` → the published demo run; a bundle file as is; else a run directory or run id."""
    if ref == "demo":
        return find_demo_run()
    path = Path(ref)
    if path.is_file():
        return path
    return RunDir.resolve(ref, runs_root or load_settings(None).run.runs_root).root


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
        f"{verdict}: {report.target} "
        f"({counts['pass']} passed, {counts['FAIL']} failed, {counts['skip']} skipped{not_applicable})"
    )


@click.command("verify")
@click.argument("target")
@click.option("--dataset", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None)
@click.option("--runs-root", type=click.Path(path_type=Path, file_okay=False), default=None)
@click.option(
    "--write-attestation", is_flag=True, help="When every check passes, (re)write attestation.json."
)
@click.option("--quiet", is_flag=True, help="Do not print the stages to stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object (nothing else).")
@from_store_option
def verify_command(
    *,
    target: str,
    dataset: Path | None,
    runs_root: Path | None,
    write_attestation: bool,
    quiet: bool,
    as_json: bool,
    from_store: str | None,
) -> None:
    """Verify TARGET (run directory, run id, bundle .tar.gz or 'demo') offline, without re-executing."""
    if from_store is not None:
        if write_attestation:
            raise click.UsageError("--write-attestation seals a run you own; pull it with `store pull` first")
        from oracleproto.cli.store import run_from_store

        pulled = run_from_store(from_store, target, quiet=quiet)
        path, dataset = pulled.run_dir, dataset or pulled.dataset
    else:
        path = resolve_run_ref(target, runs_root)
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


@bundle_group.command("export")
@click.argument("run")
@click.argument("out", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--dataset", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None)
@click.option("--no-dataset", is_flag=True, help="Publish only the dataset's digest, not the source DB.")
@click.option("--runs-root", type=click.Path(path_type=Path, file_okay=False), default=None)
def bundle_export(
    *, run: str, out: Path, dataset: Path | None, no_dataset: bool, runs_root: Path | None
) -> None:
    """Verify RUN, scan it for secrets, and write a deterministic OUT.tar.gz."""
    path = resolve_run_ref(run, runs_root)
    written = export_bundle(path, out, dataset=dataset, include_dataset=not no_dataset, progress=_stage)
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
@click.option("--no-progress", is_flag=True)
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
