"""The experiment config file as a pydantic-settings source, between the environment and ``.env``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import AliasChoices
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource


class ConfigFileSource(PydanticBaseSettingsSource):
    """The experiment config file's fields of one section (``run_config.py`` validated them)."""

    def __init__(
        self, settings_cls: type[BaseSettings], values: Mapping[str, Mapping[str, Any]] | None
    ) -> None:
        super().__init__(settings_cls)
        self._values = dict((values or {}).get(getattr(settings_cls, "CONFIG_SECTION", ""), {}))

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        """Unused: ``__call__`` returns the whole section."""
        return self._values.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        # Keyed as the environment and ``.env`` sources key them (the variable name), so the
        # sources' precedence decides, not pydantic's preference of an alias over a field name.
        out: dict[str, Any] = {}
        for name, value in self._values.items():
            alias = self.settings_cls.model_fields[name].validation_alias
            choices = alias.choices if isinstance(alias, AliasChoices) else ()
            key = choices[0] if choices and isinstance(choices[0], str) else name
            out[key] = value
        return out


class AliasOnlySource(PydanticBaseSettingsSource):
    """``inner`` (the environment, ``.env``) read by the variable names only, never by field names.

    The sections accept field names as keyword arguments (``from_values``, the CLI), which makes
    pydantic-settings also read a variable named after a field (``SEED``, ``MODE``, ``API_KEY``):
    a shell's unrelated ``MODE=record`` would silently change a run. Values the inner source found
    under a field name are dropped; those under a documented variable name pass unchanged.
    """

    def __init__(self, settings_cls: type[BaseSettings], inner: PydanticBaseSettingsSource) -> None:
        super().__init__(settings_cls)
        self._inner = inner

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        """Unused: ``__call__`` returns the whole section."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        fields = self.settings_cls.model_fields
        return {key: value for key, value in self._inner().items() if key not in fields}
