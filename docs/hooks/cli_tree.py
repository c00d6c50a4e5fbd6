"""MkDocs hook: load every lazily registered command before mkdocs-click documents the tree.

``oracleproto`` imports a command's module only when it is used (``cli/lazy_group.py``), and a
group may hold loaded commands beside lazy ones (``cassettes`` has ``diff``, ``sim`` has ``run``).
mkdocs-click lists a group's already loaded ``commands`` when there are any, so without this hook
the reference would silently miss the lazy ones. Loading them all here, once per build, makes the
generated reference the whole tree; ``tests/docs/test_site.py`` checks every command is on the page.
"""

from __future__ import annotations

from typing import Any

import click


def load_tree(command: click.Command, ctx: click.Context) -> None:
    """Load every subcommand of ``command`` (recursively) into its group's ``commands``."""
    if not isinstance(command, click.Group):
        return
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is not None:
            command.commands.setdefault(name, sub)
            load_tree(sub, click.Context(sub, parent=ctx, info_name=name))


_NO_DEFAULT = "<td><code>Sentinel.UNSET</code></td>"


def on_page_content(html: str, **_: Any) -> str:
    """An option without a default shows an empty Default cell, not click's sentinel."""
    return html.replace(_NO_DEFAULT, "<td></td>")


def on_config(config: Any, **_: Any) -> Any:
    """Before any page is read: the whole command tree, loaded."""
    from oracleproto.cli.main import cli

    load_tree(cli, click.Context(cli, info_name="oracleproto"))
    return config
