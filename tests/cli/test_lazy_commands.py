"""The lazily registered commands (cli/lazy_group.py): same listing, same help, imported on use."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from oracleproto.cli.lazy_group import LazyCommand, LazyGroup
from oracleproto.cli.main import COMMANDS, cli


def _entries() -> list[tuple[str, str, LazyCommand]]:
    """Every lazy entry of the CLI, subcommands included: (group path, name, entry)."""
    out: list[tuple[str, str, LazyCommand]] = []
    for name, entry in COMMANDS.items():
        out.append(("oracleproto", name, entry))
        out.extend((f"oracleproto {name}", sub, sub_entry) for sub, sub_entry in entry.subcommands)
    return out


ENTRIES = _entries()


@pytest.mark.parametrize(("group", "name", "entry"), ENTRIES, ids=[f"{g} {n}" for g, n, _ in ENTRIES])
def test_stored_short_help_is_the_commands_own(group: str, name: str, entry: LazyCommand) -> None:
    command = entry.load()
    assert command.name == name
    assert not command.hidden and not command.deprecated
    stand_in = entry.listing(name)
    # Every width click may list it at: the stored text shortens exactly like the command's own.
    for limit in range(1, 200):
        assert stand_in.get_short_help_str(limit) == command.get_short_help_str(limit), (name, limit)


def _eager_copy(group: click.Group) -> click.Group:
    """A plain click.Group with the same loaded commands: how the CLI listed them before."""
    ctx = click.Context(group)
    commands = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    plain = click.Group(group.name, commands={k: v for k, v in commands.items() if v is not None})
    plain.help, plain.params = group.help, group.params
    plain.context_settings = group.context_settings
    return plain


@pytest.mark.parametrize("path", [(), ("sim",), ("cassettes",)])
@pytest.mark.parametrize("width", [40, 80, 120])
def test_help_listing_matches_clicks_own(path: tuple[str, ...], width: int) -> None:
    group: click.Group = cli
    for name in path:
        sub = group.get_command(click.Context(group), name)
        assert isinstance(sub, click.Group)
        group = sub
    assert isinstance(group, LazyGroup)
    # A fresh group with the same entries: nothing lazy in it is loaded yet.
    lazy = LazyGroup(group.name, help=group.help, params=group.params)
    for name in group.list_commands(click.Context(group)):
        if name in group.lazy:
            lazy.add_lazy(name, group.lazy[name])
        else:
            lazy.add_command(group.commands[name])
    eager = set(lazy.commands)
    expected = _eager_copy(group).get_help(
        click.Context(group, terminal_width=width, max_content_width=width)
    )
    got = lazy.get_help(click.Context(lazy, terminal_width=width, max_content_width=width))
    assert got.replace(f"Usage: {lazy.name}", "") == expected.replace(f"Usage: {group.name}", "")
    assert set(lazy.commands) == eager, "listing the help imported a command"


def test_every_command_is_listed_and_runs_its_own_help() -> None:
    runner = CliRunner()
    listing = runner.invoke(cli, ["--help"], prog_name="oracleproto").output
    for name in COMMANDS:
        assert f"\n  {name} " in listing, name
        result = runner.invoke(cli, [name, "--help"], prog_name="oracleproto")
        assert result.exit_code == 0, result.output
        assert f"Usage: oracleproto {name}" in result.output


def test_an_unknown_command_is_a_usage_error() -> None:
    result = CliRunner().invoke(cli, ["no-such-command"], prog_name="oracleproto")
    assert result.exit_code == 2
    assert "No such command 'no-such-command'" in result.output


def test_completion_lists_commands_without_importing_them() -> None:
    group = LazyGroup("g")
    group.add_lazy("alpha", LazyCommand("oracleproto.no_such_module", "x", "First. More."))
    group.add_lazy("beta", LazyCommand("oracleproto.no_such_module", "y", "Second."))
    items = group.shell_complete(click.Context(group), "a")
    assert [(i.value, i.help) for i in items] == [("alpha", "First.")]
