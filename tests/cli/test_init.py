"""``oracleproto init``: templates made from the settings model, inert as written, valid uncommented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.settings.init_templates import config_template, env_name, env_template
from oracleproto.settings.model import load_settings
from oracleproto.settings.run_config import REFUSED, SECTION_CLASSES, parse_config

ALL_ENV = [env_name(info) for cls in SECTION_CLASSES.values() for info in cls.model_fields.values()]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ALL_ENV:
        monkeypatch.delenv(name, raising=False)


def _uncomment(text: str, pattern: str) -> str:
    return "\n".join(line[2:] if re.match(pattern, line) else line for line in text.splitlines()) + "\n"


def test_env_template_lists_every_setting_once_with_help() -> None:
    """Every environment variable appears once, under a help line; keys have no value."""
    lines = env_template().splitlines()
    for name in ALL_ENV:
        found = [i for i, line in enumerate(lines) if line.startswith(f"# {name}=")]
        assert len(found) == 1, name
        assert lines[found[0] - 1].startswith("# ") and "=" not in lines[found[0] - 1][:3]
    for key in ("LLM_API_KEY", "TAVILY_API_KEY", "LEAK_DETECTOR_API_KEY"):
        assert f"# {key}=\n" in env_template()
    assert not [line for line in lines if line and not line.startswith("#")]  # inert as written


def test_uncommented_env_template_loads_back_to_the_defaults(tmp_path: Path, clean_env: None) -> None:
    """Every default written to .env reads back as the same value; the empty ones (unset) load too."""
    env = tmp_path / ".env"
    env.write_text(_uncomment(env_template(), r"# [A-Z][A-Z0-9_]*=."), encoding="utf-8")
    assert load_settings(env).snapshot() == load_settings(None).snapshot()
    env.write_text(_uncomment(env_template(), r"# [A-Z][A-Z0-9_]*="), encoding="utf-8")
    load_settings(env)  # `NAME=` (empty) is accepted for every setting


def test_uncommented_config_template_is_a_valid_experiment_config(tmp_path: Path, clean_env: None) -> None:
    """The TOML template parses with run_config once its defaults are uncommented, and changes nothing."""
    text = _uncomment(config_template(), r"# [a-z_0-9]+ = (?!\s*#)")
    path = tmp_path / "oracleproto.toml"
    values = parse_config(path, text)
    settable = {(s, n) for s, cls in SECTION_CLASSES.items() for n in cls.model_fields} - set(REFUSED)
    unset = {
        (s, n) for s, cls in SECTION_CLASSES.items() for n, i in cls.model_fields.items() if i.default is None
    }
    assert {(s, n) for s, table in values.items() for n in table} == settable - unset
    assert load_settings(None, config=values).snapshot() == load_settings(None).snapshot()
    assert "api_key" not in config_template()


def test_init_writes_both_refuses_to_overwrite_then_forces(tmp_path: Path) -> None:
    """A second init exits 2 and changes nothing; --force replaces both files."""
    runner = CliRunner()
    first = runner.invoke(cli, ["init", str(tmp_path / "exp")])
    assert first.exit_code == 0, first.output
    env, toml = tmp_path / "exp" / ".env", tmp_path / "exp" / "oracleproto.toml"
    assert env.read_text(encoding="utf-8") == env_template()
    assert toml.read_text(encoding="utf-8") == config_template()
    env.write_text("MODELS=mine\n", encoding="utf-8")
    again = runner.invoke(cli, ["init", str(tmp_path / "exp")])
    assert again.exit_code == 2
    assert "already exist" in again.output and "--force" in again.output
    assert env.read_text(encoding="utf-8") == "MODELS=mine\n"
    forced = runner.invoke(cli, ["init", str(tmp_path / "exp"), "--force"])
    assert forced.exit_code == 0, forced.output
    assert env.read_text(encoding="utf-8") == env_template()
    assert sorted(p.name for p in (tmp_path / "exp").iterdir()) == [".env", "oracleproto.toml"]


def test_init_writes_the_env_file_owner_only_and_the_config_as_any_file(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        result = CliRunner().invoke(cli, ["init", str(tmp_path)])
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".env").stat().st_mode & 0o777 == 0o600  # where API keys go
    assert (tmp_path / "oracleproto.toml").stat().st_mode & 0o777 == 0o644
