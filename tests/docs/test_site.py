"""The documentation site builds with ``mkdocs build --strict`` (no warning), and its generated
pages are whole: every command of the click tree, lazily loaded ones included, and every setting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from oracleproto.settings.init_templates import env_name
from oracleproto.settings.run_config import SECTION_CLASSES

ROOT = Path(__file__).resolve().parents[2]


def _command_paths(command: click.Command, path: str) -> list[str]:
    """Every command path under ``command`` (``oracleproto cassettes diff``…), loading lazy ones."""
    paths = [path]
    if isinstance(command, click.Group):
        ctx = click.Context(command, info_name=path)
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{path} {name}"
            paths += _command_paths(sub, f"{path} {name}")
    return paths


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return out


@pytest.mark.timeout(400)
def test_the_cli_reference_documents_every_command_lazy_ones_included(site: Path) -> None:
    from oracleproto.cli.main import cli

    page = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    paths = _command_paths(cli, "oracleproto")
    # Commands loaded on first use inside a group that also holds loaded ones (mkdocs-click lists only
    # a group's loaded commands when it has any: docs/hooks/cli_tree.py loads them all first).
    assert {"oracleproto cassettes diff", "oracleproto sim run", "oracleproto sim audit-labels"} <= set(paths)
    missing = [path for path in paths if path not in page]
    assert not missing, missing
    assert "Sentinel" not in page  # click's "no default" marker is not shown as a default


@pytest.mark.timeout(400)
def test_the_settings_reference_documents_every_setting(site: Path) -> None:
    page = (site / "reference" / "settings.html").read_text(encoding="utf-8")
    assert "settings-reference" not in page  # the marker was replaced
    names = [env_name(info) for cls in SECTION_CLASSES.values() for info in cls.model_fields.values()]
    assert len(names) > 50
    missing = [name for name in names if f"<code>{name}</code>" not in page]
    assert not missing, missing
