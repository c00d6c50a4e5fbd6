"""A click group that imports a command's module only when that command is used.

Every command module pulls in its own layers (the runner, analysis with numpy and matplotlib, the
simulator, the leakage-audit server); importing all of them to run one command cost about a
second of CPU per invocation (issue 18). The group keeps a table of lazy entries — module,
attribute and the short help ``--help`` lists — so ``oracleproto --help`` and shell completion
list every command without importing any, and ``oracleproto replay`` imports only what replay
uses. ``tests/cli/test_lazy_commands.py`` keeps the stored short help equal to each command's own.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from gettext import gettext as _
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from click.shell_completion import CompletionItem


@dataclass(frozen=True)
class LazyCommand:
    """Where a command lives, its listed short help, and lazy subcommands to attach on load."""

    module: str
    attribute: str
    short_help: str
    subcommands: tuple[tuple[str, LazyCommand], ...] = ()

    def load(self) -> click.Command:
        """Import the command object (and attach its lazy subcommands when it is a group)."""
        command: object = getattr(importlib.import_module(self.module), self.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.module}.{self.attribute} is not a click command")
        if self.subcommands:
            if not isinstance(command, LazyGroup):
                raise TypeError(f"{self.module}.{self.attribute} must be a LazyGroup to take subcommands")
            for name, entry in self.subcommands:
                command.add_lazy(name, entry)
        return command

    def listing(self, name: str) -> click.Command:
        """A stand-in command with the stored help: what ``--help`` and completion show unloaded."""
        return click.Command(name, help=self.short_help)


class LazyGroup(click.Group):
    """A group whose commands are either loaded (``commands``) or lazy entries imported on demand."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, LazyCommand] = {}

    def add_lazy(self, name: str, entry: LazyCommand) -> None:
        """Register ``name`` to be imported from ``entry`` the first time it is used."""
        self.lazy[name] = entry

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, loaded or not, sorted as click lists them."""
        return sorted(set(self.commands) | set(self.lazy))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The named command, importing its module on first use."""
        command = self.commands.get(cmd_name)
        if command is None and cmd_name in self.lazy:
            command = self.lazy[cmd_name].load()
            if command.name != cmd_name:
                raise RuntimeError(f"lazy command {cmd_name!r} loaded as {command.name!r}")
            self.add_command(command)
        return command

    def _listed(self, name: str) -> click.Command:
        # The loaded command when there is one, otherwise a stand-in built from the stored help.
        return self.commands.get(name) or self.lazy[name].listing(name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands as ``click.Group`` does, from stored help for unloaded ones."""
        commands = [(name, self._listed(name)) for name in self.list_commands(ctx)]
        commands = [(name, command) for name, command in commands if not command.hidden]
        if not commands:
            return
        # The same width rule as click's own listing, so the output is unchanged.
        limit = formatter.width - 6 - max(len(name) for name, _ in commands)
        rows = [(name, command.get_short_help_str(limit)) for name, command in commands]
        with formatter.section(_("Commands")):
            formatter.write_dl(rows)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """Complete subcommand names (from stored help) and options, importing nothing."""
        from click.shell_completion import CompletionItem

        results = [
            CompletionItem(name, help=command.get_short_help_str())
            for name in self.list_commands(ctx)
            if name.startswith(incomplete) and not (command := self._listed(name)).hidden
        ]
        # The options of the group itself: click.Command's completion, skipping Group's listing.
        results.extend(click.Command.shell_complete(self, ctx, incomplete))
        return results
