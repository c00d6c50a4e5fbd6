"""``oracleproto replay RUN``: re-execute a recorded run offline and compare it byte for byte."""

from __future__ import annotations

import secrets
import shutil
import sys
import tempfile
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_FAILED
from oracleproto.cli.run import print_tables, traffic_text, write_run_analysis
from oracleproto.cli.runref import RUN_EPILOG, RunRef, label_suffix, run_argument, runs_root_option
from oracleproto.cli.stop import EXIT_STATUS, StoppedBySignalError, run_stoppable
from oracleproto.cli.store_option import from_store_option
from oracleproto.primitives.clock import SystemClock
from oracleproto.runner.replay import ReplayReport, replay_run
from oracleproto.settings.model import load_settings
from oracleproto.store import RunDir
from oracleproto.store.rundir import PANEL_NAME
from oracleproto.transport.stats import cassette_stats, savings_text

#: Exit status when a replay did not reproduce the recording.
EXIT_MISMATCH = EXIT_FAILED


def _check_processes(processes: int | None) -> None:
    if processes is None:
        return
    from oracleproto.runner.replay_shards import usable_cpus

    if processes > (cpus := usable_cpus()):
        # Each process imports the whole pipeline (≈ 70 MB): more than the CPUs only costs memory.
        raise click.BadParameter(
            f"{processes} processes, but this process may run on {cpus} CPU(s); choose at most {cpus}",
            param_hint="'--processes'",
        )


def _original(run: RunRef, *, quiet: bool) -> tuple[RunDir, Path | None]:
    """The recorded run to replay (pulled from the store with ``--from-store``) and a dataset it brought."""
    if run.kind == "store":
        from oracleproto.cli.store import run_from_store

        url = click.get_current_context().params["from_store"]
        pulled = run_from_store(url, run.text, quiet=quiet)
        return RunDir.open(pulled.run_dir), pulled.dataset
    original = RunDir.open(run.path)
    if run.kind == "directory":
        original.require_idle("replay it")
    return original, None


@click.command("replay", epilog=RUN_EPILOG)
@run_argument()
@runs_root_option
@click.option(
    "--dataset",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Source DB the run was recorded on, checked by its hash (default: the bundled demo dataset).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where the replayed run directory goes (default: a new temporary folder).",
)
@click.option("--no-progress", is_flag=True, help="Never draw the progress display.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object (nothing else).")
@click.option(
    "--processes",
    type=click.IntRange(1, 64),
    default=None,
    help="Processes sharing the samples (default: 2 for a run large enough to be served from the "
    "index, when 2 CPUs are available; else 1). The replayed run is the same whatever the number.",
)
@from_store_option
def replay_command(
    *,
    run: RunRef,
    runs_root: Path | None,
    dataset: Path | None,
    out: Path | None,
    no_progress: bool,
    as_json: bool,
    processes: int | None,
    from_store: str | None,
) -> None:
    """Replay RUN offline and compare it with the recording."""
    _check_processes(processes)
    if run.kind == "directory" and (run.path / PANEL_NAME).is_file():
        from oracleproto.cli.panel import replay_and_show

        replay_and_show(run.path, dataset=dataset, out=out)  # each member, byte for byte
        return
    settings = load_settings(None)
    original, pulled_dataset = _original(run, quiet=no_progress)
    dataset = dataset or pulled_dataset
    # Without --out the replay is a throw-away: its folder is removed however the replay ends.
    out_root = out or Path(tempfile.mkdtemp(prefix="oracleproto-replay-"))
    try:
        report = run_stoppable(
            replay_run(
                original.root,
                out_root,
                clock=SystemClock(),
                rand=secrets.SystemRandom(),
                dataset=dataset,
                progress=not no_progress,
                after=write_run_analysis if _has_analysis(original) else None,
                cache_root=settings.run.cache_dir,
                processes=processes,
            )
        )
        _show(report, original, run, kept=out is not None, as_json=as_json)
    except StoppedBySignalError as stop:
        # replay_run removed its run folder; the temporary folder goes below.
        click.echo(f"{stop.reason}: replay of {original.run_id} stopped; its output was removed", err=True)
        sys.exit(EXIT_STATUS[stop.reason])
    finally:
        if out is None:
            shutil.rmtree(out_root, ignore_errors=True)
    if not report.ok:
        sys.exit(EXIT_MISMATCH)


def _show(report: ReplayReport, original: RunDir, run: RunRef, *, kept: bool, as_json: bool) -> None:
    """The verdict (text or ``--json``), the tables of a reproduced run, and the viewer hint."""
    if as_json:
        from oracleproto.cli.jsonout import emit_replay

        emit_replay(report, kept=kept, tables=report.ok and _has_analysis(original))
        return
    _print_verdict(report, kept=kept)
    if report.ok and _has_analysis(original):
        print_tables(RunDir.open(report.replayed))
    from oracleproto.cli.view_hint import viewer_hint

    click.echo(viewer_hint(run.text, original.run_id))


def _has_analysis(run: RunDir) -> bool:
    return run.analysis_dir.is_dir() and any(run.analysis_dir.iterdir())


def _print_verdict(report: ReplayReport, *, kept: bool) -> None:
    width = max(len(c.what) for c in report.checks)
    for check in report.checks:
        mark = "match" if check.ok else "DIFFERS"
        line = f"  {check.what.ljust(width)}  {mark}"
        if check.detail:
            line += f"  — {check.detail}"
        click.echo(line)
    matched = sum(c.ok for c in report.checks)
    verdict = "reproduced byte for byte" if report.ok else "did NOT reproduce"
    click.echo(
        f"replay of {report.original}{label_suffix(Path(report.original))} {verdict} "
        f"({matched}/{len(report.checks)} checks match)"
    )
    errors = report.summary.errors
    if errors:
        # A replay reproduces the recording, call errors included: they are not a replay failure.
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(errors.items()))
        click.echo(
            f"note: {sum(errors.values())} sample(s) of this recording ended in a call error ({kinds}), "
            "reproduced as recorded; to retry them, resume the recording live with --run-id "
            f"{report.summary.run.run_id}"
        )
    if kept:
        click.echo(f"replayed run: {report.replayed}")
    else:
        click.echo("replayed run: in a temporary folder, now removed (pass --out DIR to keep it)")
    click.echo(traffic_text(report.summary.traffic))
    # Counted while the replay's entries were in memory: parsing the cassettes again doubled its time.
    stats = report.summary.cassettes or cassette_stats(RunDir.open(report.replayed).cassettes_dir)
    click.echo(savings_text(stats))
