"""``oracleproto panel``: build, verify and replay panels (one comparable result from many runs)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_FAILED
from oracleproto.cli.runref import RunArgument, RunRef, runs_root_option

#: Shown under the options of the commands whose argument is a panel.
PANEL_EPILOG = (
    "PANEL: a panel directory (`panel build --out`), or its run id, a unique prefix of one or its "
    "name under --runs-root (found as a RUN is)."
)


def _stage(name: str) -> None:
    click.echo(f"… {name}", err=True)


@click.group("panel")
def panel_group() -> None:
    """Panels: one virtual run from several runs or shards of one experiment (docs/run-at-scale.md)."""


@panel_group.command("build")
@click.argument("spec", metavar="PANEL.toml", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    required=True,
    help="The panel directory to write (new or empty); report, leaderboard, view and verify take it.",
)
@click.option(
    "--store",
    "store_url",
    default=None,
    help="Cassette store of members named by store id (default: the panel file's, else CASSETTE_STORE).",
)
@click.option("--quiet", is_flag=True, help="Do not print the stages to stderr.")
def build_command(*, spec: Path, out: Path, store_url: str | None, quiet: bool) -> None:
    """Merge the per-model DBs of the members PANEL.toml lists into the panel OUT."""
    from oracleproto.panel import build_panel

    built = build_panel(spec, out, store_url=store_url, progress=(lambda _: None) if quiet else _stage)
    models = sum(len(m.databases) for m in built.members)
    click.echo(
        f"panel {built.run_id}: {models} model(s) from {len(built.members)} member(s), "
        f"root {built.merkle_root}",
        err=True,
    )
    click.echo(str(built.root))


@panel_group.command("verify", epilog=PANEL_EPILOG)
@click.argument("panel", metavar="PANEL", type=RunArgument())
@runs_root_option
@click.option(
    "--dataset",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="Source DB the members were recorded on, checked by its hash (default: the demo dataset).",
)
def verify_command(*, panel: RunRef, runs_root: Path | None, dataset: Path | None) -> None:
    """Verify PANEL: each member as a run, the merge byte for byte, the analysis regenerated."""
    from oracleproto.verify.run import verify_run

    report = verify_run(
        _panel_dir(panel, "verify", "checks"), dataset=dataset, progress=_stage
    )  # a panel: its members, then the merge
    for check in report.checks:
        line = f"  {check.status:<4} {check.what}"
        if check.detail and not check.ok:
            line += f" — {check.detail}"
        click.echo(line)
    verdict = "VERIFIED" if report.ok else "FAILED"
    click.echo(f"{verdict}: {len(report.failures)} of {len(report.checks)} checks failed")
    if not report.ok:
        sys.exit(EXIT_FAILED)


@panel_group.command("replay", epilog=PANEL_EPILOG)
@click.argument("panel", metavar="PANEL", type=RunArgument())
@runs_root_option
@click.option(
    "--dataset",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="Source DB the members were recorded on, checked by its hash (default: the demo dataset).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Where the replayed members go (default: a temporary folder, removed afterwards).",
)
def replay_command(*, panel: RunRef, runs_root: Path | None, dataset: Path | None, out: Path | None) -> None:
    """Replay every member of PANEL offline; each must reproduce its recording byte for byte."""
    replay_and_show(_panel_dir(panel, "replay", "replays"), dataset=dataset, out=out)


def _panel_dir(ref: RunRef, command: str, does: str) -> Path:
    """The panel directory ``ref`` names; a run that is not a panel is refused naming the right command."""
    from oracleproto.panel.spec import PanelError
    from oracleproto.panel.verify import is_panel

    if not is_panel(ref.path):
        raise PanelError(f"{ref.text}: not a panel (no panel.json); `oracleproto {command}` {does} a run")
    return ref.path


def replay_and_show(panel: Path, *, dataset: Path | None, out: Path | None) -> None:
    """Replay every member of ``panel`` (``panel replay`` and ``replay PANEL``); exit 1 on a difference."""
    import asyncio

    from oracleproto.panel.replay import replay_panel
    from oracleproto.settings.model import load_settings

    out_root = out or Path(tempfile.mkdtemp(prefix="oracleproto-panel-replay-"))
    try:
        result = asyncio.run(
            replay_panel(panel, out_root, dataset=dataset, cache_root=load_settings(None).run.cache_dir)
        )
    finally:
        if out is None:
            shutil.rmtree(out_root, ignore_errors=True)
    for report in result.members:
        matched = sum(c.ok for c in report.checks)
        verdict = "reproduced byte for byte" if report.ok else "did NOT reproduce"
        click.echo(f"member {report.original.name}: {verdict} ({matched}/{len(report.checks)} checks match)")
        for check in report.checks:
            if not check.ok:
                click.echo(f"  {check.what}: DIFFERS — {check.detail}")
    for problem in result.problems:
        click.echo(f"  {problem}")
    if out is not None:
        click.echo(f"replayed members: {out}")
    if result.ok:
        click.echo(
            f"panel {panel}: every member reproduced byte for byte "
            f"({len(result.matched)} DBs as in the panel)"
        )
    else:
        click.echo(f"panel {panel}: did NOT reproduce")
        sys.exit(EXIT_FAILED)
