"""The base of every settings section: where a section's values come from, in which precedence.

Explicit values (the CLI) win over the environment, which wins over the experiment config file,
which wins over ``.env``; a section built ``from_values`` reads none of them (replay, simulator
runs). ``model.load_settings`` sets ``CONFIG_VALUES`` while it reads a config file's values.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Self

from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from oracleproto.settings.source import AliasOnlySource, ConfigFileSource

#: Off while a section is built from explicit values only (replay, simulator runs).
_READ_ENVIRONMENT: ContextVar[bool] = ContextVar("oracleproto_read_environment", default=True)
#: The experiment config file's values (section → field → value) while ``load_settings`` reads one.
CONFIG_VALUES: ContextVar[Mapping[str, Mapping[str, Any]] | None] = ContextVar(
    "oracleproto_config_values", default=None
)


class SettingsSection(BaseSettings):
    """One section of the settings, read from its sources (see the module docstring)."""

    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", frozen=True, populate_by_name=True, case_sensitive=False
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Environment and ``.env`` unless building from explicit values."""
        if not _READ_ENVIRONMENT.get():
            return (init_settings,)
        # Precedence: explicit values (CLI) > environment > experiment config file > ``.env``.
        config = ConfigFileSource(settings_cls, CONFIG_VALUES.get())
        return (
            init_settings,
            AliasOnlySource(settings_cls, env_settings),
            config,
            AliasOnlySource(settings_cls, dotenv_settings),
            file_secret_settings,
        )

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Self:
        """Build from ``values`` (field names) and defaults only, ignoring the environment."""
        token = _READ_ENVIRONMENT.set(False)
        try:
            return cls(**values)
        finally:
            _READ_ENVIRONMENT.reset(token)
