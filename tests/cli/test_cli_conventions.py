"""The same nouns and flags in every command (issue 31 §1), checked over the whole click tree.

Every option has help text; ``--runs-root``, ``--samples``, ``--limit`` and ``--models`` mean the same
thing wherever they appear; every error, click's own included, is printed as ``error: …``.
"""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli


def _walk(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command of the tree, lazy ones loaded (through click's lookup, as the CLI runs them)."""
    out = [(path, command)]
    if isinstance(command, click.Group):
        ctx = click.Context(command)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, (path, name)
            out += _walk(sub, (*path, name))
    return out


COMMANDS = _walk(cli)


def _options(command: click.Command) -> dict[str, click.Option]:
    return {opt: p for p in command.params if isinstance(p, click.Option) for opt in p.opts}


def test_the_walk_sees_the_lazy_commands() -> None:
    paths = {" ".join(path) for path, _ in COMMANDS}
    assert {"replay", "runs list", "runs show", "cassettes diff", "sim run", "audit sample"} <= paths
    assert len(paths) > 50


def test_every_option_has_help_text() -> None:
    missing = [
        f"{' '.join(path) or 'oracleproto'} {param.opts[0]}"
        for path, command in COMMANDS
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not (param.help or "").strip()
    ]
    assert not missing, f"options without help: {missing}"


def _having(option: str) -> dict[str, click.Option]:
    return {" ".join(path): found for path, command in COMMANDS if (found := _options(command).get(option))}


def test_runs_root_is_documented_wherever_it_is_taken() -> None:
    having = _having("--runs-root")
    assert {"replay", "verify", "report", "export", "view", "runs list", "run", "sim run", "plan"} <= set(
        having
    )
    for where, option in having.items():
        assert "run" in (option.help or "").lower(), where


@pytest.mark.parametrize("option", ["--samples", "--limit", "--models"])
def test_run_sim_run_and_plan_take_the_same_flags(option: str) -> None:
    having = _having(option)
    assert {"run", "sim run", "plan"} <= set(having), option
    if option == "--models":
        # Model slugs everywhere; the simulator's count of personas has its own name.
        assert {having[w].metavar for w in ("run", "sim run", "plan")} == {"SLUG,…"}
        assert "--personas" in _options({" ".join(p): c for p, c in COMMANDS}["sim run"])
    if option == "--samples":
        assert all("Samples per question n" in (having[w].help or "") for w in ("run", "sim run", "plan"))
    if option == "--limit":
        assert all("Only the first N questions" in (having[w].help or "") for w in ("run", "sim run", "plan"))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["replay", "--frobnicate"], "error: No such option '--frobnicate'"),
        (["replay"], "error: Missing argument 'RUN'"),
        (["replay", "nope"], "error: nope: run directory not found"),
        (["report", "--bold", "x", "demo"], "error: Invalid value for '--bold'"),
    ],
)
def test_one_error_style(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Error:" not in result.output
