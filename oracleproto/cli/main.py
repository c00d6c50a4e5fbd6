"""The ``oracleproto`` command: a thin click layer over the public functions.

Each command group lives in its own module and is registered here; nothing imports
this package.
"""

from __future__ import annotations

import sys

import click

from oracleproto._version import __version__
from oracleproto.cli.exits import EXIT_INVALID
from oracleproto.errors import OracleprotoError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="oracleproto")
def cli() -> None:
    """Reproducible benchmarking of LLM native forecasting (record/replay)."""


def _register() -> None:
    # Command modules are imported here, not at package import, to keep `import oracleproto` light.
    from oracleproto.cli.audit import diff_cmd
    from oracleproto.cli.cassettes import cache, cassettes
    from oracleproto.cli.dataset import dataset
    from oracleproto.cli.render import render_command
    from oracleproto.cli.report import report
    from oracleproto.cli.run import replay_command, run_command
    from oracleproto.cli.sim import sim_group
    from oracleproto.cli.sim_run import sim_run
    from oracleproto.cli.verify import bundle_group, demo_group, verify_command

    sim_group.add_command(sim_run)
    cassettes.add_command(diff_cmd)
    for command in (
        dataset,
        render_command,
        run_command,
        replay_command,
        report,
        cassettes,
        cache,
        sim_group,
        verify_command,
        bundle_group,
        demo_group,
    ):
        cli.add_command(command)


_register()


def main() -> None:
    """Console-script entry point: known errors print one clear message, exit non-zero."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except OracleprotoError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INVALID)
