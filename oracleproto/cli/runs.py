"""``oracleproto runs list|show``: the runs under a runs root, and one run's facts (read only)."""

from __future__ import annotations

from pathlib import Path

import click

from oracleproto.cli.runref import RUN_EPILOG, RunRef, default_runs_root, run_argument, runs_root_option
from oracleproto.store.catalog import RunInfo, describe_run, list_runs

_HEADER = ("RUN", "NAME", "STARTED (UTC)", "MODELS", "QUESTIONS×N", "STATE", "VERIFY", "SIZE")


def human_size(size: int) -> str:
    """``812 B``, ``4.2 KB``, ``1.3 MB``, ``2.0 GB`` (powers of 1000, as ``store push`` prints)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def _when(stamp: str | None) -> str:
    """``2026-03-01 12:00`` from a manifest timestamp; ``-`` when unknown."""
    return "-" if not stamp else f"{stamp[:10]} {stamp[11:16]}"


def _models(info: RunInfo, limit: int = 2) -> str:
    if not info.models:
        return "-"
    shown = ", ".join(info.models[:limit])
    return shown + (f" +{len(info.models) - limit}" if len(info.models) > limit else "")


def _row(info: RunInfo) -> tuple[str, ...]:
    return (
        info.run_id,
        info.label.text() or "-",
        _when(info.started_at),
        _models(info),
        f"{info.questions}×{info.samples}" if info.samples else "-",
        info.state,
        "-" if info.seal == "unknown" else info.seal,
        human_size(info.size),
    )


def _table(rows: list[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


@click.group("runs")
def runs_group() -> None:
    """The runs under the runs root: id, name, when, models, questions × samples, state, size."""


@runs_group.command("list")
@runs_root_option
@click.option("--json", "as_json", is_flag=True, help="Print the runs as one JSON object (nothing else).")
def list_command(*, runs_root: Path | None, as_json: bool) -> None:
    """One line per run directory under the runs root, oldest first."""
    root = runs_root if runs_root is not None else default_runs_root()
    infos = list_runs(root)
    if as_json:
        from oracleproto.cli.jsonout import emit

        emit("runs-list", {"runs_root": str(root), "runs": [info.document() for info in infos]})
        return
    if not infos:
        click.echo(f"no runs under {root} (record one: `oracleproto run --record`, `oracleproto sim run`)")
        return
    for line in _table([_HEADER, *(_row(info) for info in infos)]):
        click.echo(line)
    click.echo(f"{len(infos)} run(s) under {root}; `oracleproto runs show RUN` for one in full", err=True)


_SEAL_TEXT = {
    "sealed": "sealed (attestation.json written when it verified; `oracleproto verify` checks every byte)",
    "changed": "changed since it was sealed: `oracleproto verify` says what",
    "unknown": "unknown (not sealed: `oracleproto verify --write-attestation` seals a run that verifies)",
}


def show_lines(info: RunInfo) -> list[str]:
    """``runs show``: one fact a line."""
    verify = _SEAL_TEXT.get(info.seal, _SEAL_TEXT["unknown"])
    errored = "unknown" if info.errored is None else str(info.errored)
    lines = [
        f"run:       {info.run_id}",
        f"path:      {info.path}",
        f"name:      {info.label.name or '-'}",
        f"tags:      {', '.join(info.label.tags) or '-'}",
        f"state:     {info.state} ({info.detail})" if info.detail else f"state:     {info.state}",
    ]
    if info.state == "damaged":
        return [*lines, f"size:      {human_size(info.size)}"]
    return [
        *lines,
        f"started:   {info.started_at}",
        f"finished:  {info.finished_at or '-'}",
        f"models:    {', '.join(info.models)} ({info.cells} grid cell(s))",
        f"questions: {info.questions} × {info.samples} sample(s)",
        f"errored:   {errored} sample(s) ended in a call error",
        f"verify:    {verify}",
        f"size:      {human_size(info.size)} ({info.size} bytes)",
    ]


@runs_group.command("show", epilog=RUN_EPILOG)
@run_argument()
@runs_root_option
@click.option("--json", "as_json", is_flag=True, help="Print the run as one JSON object (nothing else).")
def show_command(*, run: RunRef, runs_root: Path | None, as_json: bool) -> None:
    """Everything `runs list` says about RUN, in full."""
    info = describe_run(run.path)
    if as_json:
        from oracleproto.cli.jsonout import emit

        emit("runs-show", info.document())
        return
    for line in show_lines(info):
        click.echo(line)
