"""Only the documented variable names configure a section: a variable named after a field does not.

The sections accept field names as keyword arguments (``from_values``, the CLI); pydantic-settings
would then also read ``SEED``, ``MODE``, ``API_KEY``… from the environment and ``.env``, so an
unrelated ``MODE=record`` or ``SEED=…`` in a shell changed a run without a word.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from oracleproto.settings.init_templates import env_name
from oracleproto.settings.model import load_settings
from oracleproto.settings.run_config import SECTION_CLASSES

#: (field name, its variable) for every field whose name is not also its variable's name.
FIELD_NAMED = sorted(
    {
        (name, env_name(info))
        for cls in SECTION_CLASSES.values()
        for name, info in cls.model_fields.items()
        if env_name(info).lower() != name
    }
)
#: Not a valid value of any field: read under a field's name, it would fail validation.
JUNK = "@@ not a value @@"


@pytest.fixture
def no_settings_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for cls in SECTION_CLASSES.values():
        for name, info in cls.model_fields.items():
            monkeypatch.delenv(env_name(info), raising=False)
            monkeypatch.delenv(name.upper(), raising=False)


def test_the_field_named_variables_exist() -> None:
    """The check below covers the fields it should (a rename of every variable would empty it)."""
    names = {name for name, _ in FIELD_NAMED}
    assert {"seed", "mode", "api_key", "temperature", "base_url", "max_tokens"} <= names


def test_environment_variables_named_after_fields_change_nothing(
    monkeypatch: pytest.MonkeyPatch, no_settings_env: None
) -> None:
    defaults = load_settings(None).snapshot()
    for name, _ in FIELD_NAMED:
        monkeypatch.setenv(name.upper(), JUNK)
        monkeypatch.setenv(name, JUNK)
    assert load_settings(None).snapshot() == defaults


def test_env_file_lines_named_after_fields_change_nothing(tmp_path: Path, no_settings_env: None) -> None:
    defaults = load_settings(None).snapshot()
    env = tmp_path / ".env"
    env.write_text(
        "".join(f"{name.upper()}={JUNK}\n{name}={JUNK}\n" for name, _ in FIELD_NAMED), encoding="utf-8"
    )
    assert load_settings(env).snapshot() == defaults


def test_the_documented_variables_are_still_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_settings_env: None
) -> None:
    """The same three settings, by their variables: from the environment, and from ``.env`` in any case."""
    monkeypatch.setenv("ANALYSIS_SEED", "7")
    monkeypatch.setenv("SEED", "8")
    monkeypatch.setenv("ORACLEPROTO_MODE", "record")
    s = load_settings(None)
    assert (s.analysis.seed, s.run.mode) == (7, "record")
    monkeypatch.delenv("ANALYSIS_SEED")
    monkeypatch.delenv("ORACLEPROTO_MODE")
    env = tmp_path / ".env"
    env.write_text("analysis_seed=9\nLLM_TEMPERATURE=0.2\nMODELS=vendor/a\n", encoding="utf-8")
    s = load_settings(env)
    assert (s.analysis.seed, s.llm.temperature, s.llm.models) == (9, 0.2, ["vendor/a"])
