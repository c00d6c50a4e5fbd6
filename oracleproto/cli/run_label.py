"""``--name`` and ``--tag`` of ``run`` and ``sim run``: a run's label (``store/label.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from oracleproto.errors import StoreError
from oracleproto.store.label import RunLabel, make_label, read_label, write_label
from oracleproto.store.manifest import MANIFEST_NAME
from oracleproto.store.naming import RUN_ID_RE

F = TypeVar("F", bound=Callable[..., Any])


def label_options(func: F) -> F:
    """Add ``--name NAME`` and ``--tag TAG`` (repeatable): the command gets ``name`` and ``tags``."""

    func = click.option(
        "--tag",
        "tags",
        multiple=True,
        metavar="TAG",
        help="A tag for the run (repeatable), shown by `runs list|show` beside its id.",
    )(func)
    return click.option(
        "--name",
        "name",
        default=None,
        metavar="NAME",
        help="A name for the run, unique under the runs root: shown beside its id, and any RUN argument "
        "may give it instead of the id. Letters, digits, . _ + -; starts with a letter.",
    )(func)


def run_label(name: str | None, tags: tuple[str, ...], runs_root: Path, run_id: str | None) -> RunLabel:
    """The checked label; a name another run under ``runs_root`` already has is refused."""
    try:
        label = make_label(name, tags)
    except StoreError as exc:
        raise click.BadParameter(str(exc), param_hint="'--name' / '--tag'") from None
    if label.name is not None:
        try:
            folders = [p for p in runs_root.iterdir() if RUN_ID_RE.fullmatch(p.name) and p.name != run_id]
        except OSError:
            folders = []
        taken = [p.name for p in sorted(folders) if read_label(p).name == label.name]
        if taken:
            raise click.BadParameter(
                f"run {taken[0]} under {runs_root} is already named {label.name!r}; choose another name",
                param_hint="'--name'",
            )
    return label


def write_run_label(run_root: Path, label: RunLabel | None) -> None:
    """Give the run its label once it exists (its manifest written); never fails the run over it."""
    if label is None or label.empty or not (run_root / MANIFEST_NAME).is_file():
        return
    try:
        write_label(run_root, label)
    except OSError as exc:
        click.echo(f"note: could not write the run's name and tags to {run_root}: {exc}", err=True)
