"""The experiment config file: a TOML file with the settings' sections and fields.

``oracleproto run|plan --config FILE`` reads it; without ``--config``, ``oracleproto.toml`` in the
working directory is read when it exists. Its tables are the settings' sections and its keys the
fields (``[llm] models = ["vendor/model"]``, ``[run] sampling_n = 3``); every key says which
environment variable it stands for in ``docs/design/architecture.md``. Precedence: command-line options >
environment variables > this file > ``.env`` > defaults. API keys are refused here: a config file
is meant to be committed with an experiment, keys belong in ``.env`` or the environment.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from oracleproto.errors import ConfigError
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.primitives.redact import scrub_text
from oracleproto.settings.model import (
    AnalysisSettings,
    DetectorSettings,
    LLMSettings,
    ReactSettings,
    RunSettings,
    SearchSettings,
)

#: The file read from the working directory when no ``--config`` is given.
DEFAULT_CONFIG_NAME = "oracleproto.toml"
SECTION_CLASSES: dict[str, Any] = {
    "llm": LLMSettings,
    "search": SearchSettings,
    "detector": DetectorSettings,
    "react": ReactSettings,
    "run": RunSettings,
    "analysis": AnalysisSettings,
}
#: Fields a config file may not set: secrets, and this session's mode (a flag of the command).
REFUSED = {
    ("llm", "api_key"): "keep API keys in .env or the environment, not in a file meant to be shared",
    ("search", "api_keys"): "keep API keys in .env or the environment, not in a file meant to be shared",
    ("detector", "api_key"): "keep API keys in .env or the environment, not in a file meant to be shared",
}


@dataclass(frozen=True)
class ConfigFile:
    """A read and validated experiment config file."""

    path: Path
    sha256: str
    values: dict[str, dict[str, Any]] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """What a run records of the file: its name and sha256 (its values are in the snapshot)."""
        return {"name": self.path.name, "sha256": self.sha256}


def _problem(path: Path, where: str, what: str) -> ConfigError:
    return ConfigError(f"config file {path}: {where}: {what}")


def _check_value(path: Path, section: str, name: str, value: Any) -> Any:
    """The value as the settings accept it; a bad one is named with its key and the file."""
    cls = SECTION_CLASSES[section]
    if isinstance(value, list) and all(isinstance(v, int | float | str) for v in value):
        # Lists keep their TOML types; the settings' validators also accept comma-separated text.
        candidate: Any = list(value)
    else:
        candidate = value
    try:
        cls.from_values({name: candidate})
    except ValidationError as exc:
        messages = "; ".join(scrub_text(str(err["msg"])) for err in exc.errors(include_url=False))
        raise _problem(path, f"[{section}] {name}", f"{messages} (got {value!r})") from None
    return candidate


def parse_config(path: Path, text: str) -> dict[str, dict[str, Any]]:
    """Validate a config file's TOML text: known sections and keys, values of the right type."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path} is not valid TOML: {exc}; fix the line it names") from None
    values: dict[str, dict[str, Any]] = {}
    for section, table in data.items():
        if section not in SECTION_CLASSES:
            known = ", ".join(f"[{s}]" for s in SECTION_CLASSES)
            hint = f"put it under one of {known}" if not isinstance(table, dict) else f"use one of {known}"
            raise _problem(path, section, f"unknown section; {hint}")
        if not isinstance(table, dict):
            raise _problem(path, section, "must be a table ([section] followed by key = value lines)")
        fields = SECTION_CLASSES[section].model_fields
        for name, value in table.items():
            if name not in fields:
                close = [f for f in fields if f.startswith(name[:4])] or sorted(fields)
                raise _problem(path, f"[{section}] {name}", f"unknown key; known keys: {', '.join(close)}")
            refused = REFUSED.get((section, name))
            if refused is not None:
                raise _problem(path, f"[{section}] {name}", f"not allowed in a config file; {refused}")
            values.setdefault(section, {})[name] = _check_value(path, section, name, value)
    return values


def load_config(path: Path) -> ConfigFile:
    """Read and validate ``path``; a missing or unreadable file is a ``ConfigError``."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist; check --config or create it") from None
    except OSError as exc:
        raise ConfigError(f"config file {path} cannot be read ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"config file {path} is not UTF-8 text (byte offset {exc.start})") from None
    return ConfigFile(path=path, sha256=sha256_hex(raw), values=parse_config(path, text))


def find_config(explicit: Path | None, cwd: Path | None = None) -> ConfigFile | None:
    """``--config FILE``, else ``oracleproto.toml`` of the working directory when it exists."""
    if explicit is not None:
        return load_config(explicit)
    default = (cwd or Path.cwd()) / DEFAULT_CONFIG_NAME
    return load_config(default) if default.is_file() else None


def config_values(config: ConfigFile | None) -> Mapping[str, Mapping[str, Any]]:
    """The values ``settings.load_settings`` takes (empty without a file)."""
    return config.values if config is not None else {}
