"""``oracleproto store push|pull|ls``: sealed runs in a shared, content-addressed cassette store.

Also the ``--from-store`` helper of ``replay``, ``verify`` and ``bundle import``. Exit statuses:
0 done, 1 a damaged or tampered object or index (nothing written into place), 2 bad input,
3 the credentials may not do this (403), 4 the store kept failing after every retry (resumable).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from oracleproto.cli.exits import EXIT_AUTH, EXIT_FAILED, EXIT_UNAVAILABLE
from oracleproto.cli.runref import RUN_EPILOG, RunRef, run_argument, runs_root_option
from oracleproto.objectstore import (
    Backend,
    DamagedObjectError,
    ObjectCache,
    PulledRun,
    StoreAccessDeniedError,
    StoreUnavailableError,
    default_cache_dir,
    list_runs,
    materialize,
    pull_run,
    push_run,
    store_from,
)

_STORE_HELP = "The store: s3://BUCKET/PREFIX or file:///FOLDER (default: $CASSETTE_STORE)."
_CACHE_HELP = "Local object cache (default: $CASSETTE_STORE_CACHE, else ~/.cache/oracleproto/store)."


def _stage(name: str) -> None:
    click.echo(f"· {name}", err=True)


def _quiet(_: str) -> None:
    pass


@contextlib.contextmanager
def store_errors() -> Iterator[None]:
    """A store failure's message (already scrubbed of credentials) and its own exit status."""
    try:
        yield
    except DamagedObjectError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_FAILED)
    except StoreAccessDeniedError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_AUTH)
    except StoreUnavailableError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_UNAVAILABLE)


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def run_from_store(url: str, ref: str, *, quiet: bool = False) -> PulledRun:
    """``--from-store URL``: the run ``ref`` names, laid out and verified in the local cache."""
    backend = Backend(store_from(url, flag="--from-store"))
    with store_errors():
        pulled = materialize(backend, ref, ObjectCache(default_cache_dir()), _quiet if quiet else _stage)
    click.echo(
        f"from {backend.location}: run {pulled.index.run_id}, index {pulled.digest[:16]}… "
        f"({pulled.fetched} object(s) fetched, {pulled.cached} from the cache {default_cache_dir()})",
        err=True,
    )
    return pulled


@click.group("store")
def store_group() -> None:
    """Share sealed runs through a content-addressed store (S3-compatible or a shared folder)."""


@store_group.command("push", epilog=RUN_EPILOG)
@run_argument()
@click.option("--store", "url", default=None, help=_STORE_HELP)
@click.option(
    "--dataset",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    default=None,
    help="Source DB to upload with the run (default: the demo dataset, when the run's hash is its).",
)
@click.option("--no-dataset", is_flag=True, help="Publish only the dataset's digest, not the source DB.")
@runs_root_option
@click.option("--quiet", is_flag=True, help="Do not print the stages to stderr.")
def push_command(
    *,
    run: RunRef,
    url: str | None,
    dataset: Path | None,
    no_dataset: bool,
    runs_root: Path | None,
    quiet: bool,
) -> None:
    """Upload the sealed RUN: the objects the store lacks, then its index."""
    backend = Backend(store_from(url, flag="--store"), create=True)
    path = run.path
    with store_errors():
        done = push_run(
            backend,
            path,
            dataset=dataset,
            include_dataset=not no_dataset,
            progress=_quiet if quiet else _stage,
        )
    click.echo(
        f"pushed run {done.run_id} to {backend.location}: "
        f"{done.uploaded} of {done.objects} object(s) uploaded "
        f"({_mb(done.uploaded_bytes)}), {done.present} already there"
        + ("" if done.index_written else "; its index was already there")
    )
    click.echo(f"index: {done.digest}")
    click.echo(f"pull it with: oracleproto store pull {done.digest[:16]} DEST --store {backend.location}")


@store_group.command("pull")
@click.argument("ref")
@click.argument("dest", type=click.Path(path_type=Path, file_okay=False))
@click.option("--store", "url", default=None, help=_STORE_HELP)
@click.option("--cache", type=click.Path(path_type=Path, file_okay=False), default=None, help=_CACHE_HELP)
@click.option("--quiet", is_flag=True, help="Do not print the stages to stderr.")
def pull_command(*, ref: str, dest: Path, url: str | None, cache: Path | None, quiet: bool) -> None:
    """Fetch the run REF (run id, index digest or index file) into DEST, verified before it is placed."""
    backend = Backend(store_from(url, flag="--store"))
    with store_errors():
        pulled = pull_run(
            backend, ref, dest, ObjectCache(cache or default_cache_dir()), _quiet if quiet else _stage
        )
    click.echo(
        f"pulled run {pulled.index.run_id} (index {pulled.digest[:16]}…): {pulled.fetched} object(s) fetched "
        f"({_mb(pulled.fetched_bytes)}), {pulled.cached} from the local cache"
    )
    click.echo(f"run: {pulled.run_dir}")
    dataset = f" --dataset {pulled.dataset}" if pulled.dataset is not None else " --dataset <source DB>"
    if pulled.dataset is not None:
        click.echo(f"dataset: {pulled.dataset}")
    click.echo(f"verify it with: oracleproto verify {pulled.run_dir}{dataset}")
    click.echo(f"replay it with: oracleproto replay {pulled.run_dir}{dataset}")


@store_group.command("ls")
@click.option("--store", "url", default=None, help=_STORE_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (nothing else).")
def ls_command(*, url: str | None, as_json: bool) -> None:
    """List the runs in the store: run id, index digest, files, bytes, dataset, cassette root."""
    backend = Backend(store_from(url, flag="--store"))
    with store_errors():
        runs = list_runs(backend)
    if as_json:
        rows = [
            {
                "run_id": r.run_id,
                "index": r.digest,
                "files": r.files,
                "bytes": r.bytes,
                "dataset": r.dataset,
                "cassette_root": r.cassette_root,
                "problem": r.problem,
            }
            for r in runs
        ]
        click.echo(json.dumps({"store": str(backend.location), "runs": rows}, sort_keys=True, indent=1))
        return
    if not runs:
        click.echo(f"{backend.location}: no runs")
        return
    click.echo(f"{backend.location}: {len(runs)} run index(es)")
    for r in runs:
        if r.problem is not None:
            click.echo(f"  {r.run_id}  {r.digest[:16]}  DAMAGED: {r.problem}")
            continue
        data = r.dataset or "(digest only)"
        root = (r.cassette_root or "-")[:16]
        click.echo(
            f"  {r.run_id}  {r.digest[:16]}  {r.files:>5} files  {_mb(r.bytes):>10}  {data}  root {root}"
        )
