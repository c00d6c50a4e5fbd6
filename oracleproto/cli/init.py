"""``oracleproto init [DIR]``: a commented ``.env`` template and an experiment config to start from."""

from __future__ import annotations

from pathlib import Path

import click

from oracleproto.settings.init_templates import write_templates


@click.command("init")
@click.argument("folder", required=False, type=click.Path(path_type=Path, file_okay=False), default=Path("."))
@click.option("--force", is_flag=True, help="Overwrite an existing .env / oracleproto.toml.")
def init_command(*, folder: Path, force: bool) -> None:
    """Write FOLDER/.env (every setting, commented, with its default) and FOLDER/oracleproto.toml."""
    for path in write_templates(folder, force=force):
        click.echo(str(path))
    click.echo(
        "next: put your keys in .env, models and cutoffs in oracleproto.toml, then "
        "`oracleproto run --dry-run` to see the plan and its cost before any call",
        err=True,
    )
