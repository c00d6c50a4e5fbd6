"""Raw configuration input: the env file checked before it is read, and environment values
(JSON or comma lists, mappings) turned into settings values.

Messages never quote the raw text: a list variable may hold API keys.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import SecretStr
from pydantic_settings import NoDecode

from oracleproto.errors import ConfigError
from oracleproto.primitives.oserrors import describe_os_error


def split_list(value: Any) -> Any:
    """Accept a JSON list or a comma-separated string for list-valued variables."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return []
        if text.startswith("["):
            try:
                return json.loads(text)
            except json.JSONDecodeError as exc:
                # The message must not quote the text: it may be a list of keys.
                raise ValueError(
                    f"starts with '[' but is not a valid JSON list ({exc.msg} at character {exc.pos}); "
                    'write the values comma-separated, or as a JSON list such as ["a","b"]'
                ) from None
        return [part.strip() for part in text.split(",") if part.strip()]
    return value


def split_mapping(value: Any) -> Any:
    """Accept a JSON object or ``key=value,key=value`` for mapping-valued variables."""
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return {}
        if text.startswith("{"):
            return json.loads(text)
        out: dict[str, str] = {}
        for part in text.split(","):
            if not part.strip():
                continue
            key, sep, val = part.partition("=")
            if not sep:
                raise ValueError(f"expected key=value, got {part.strip()!r}")
            out[key.strip()] = val.strip()
        return out
    return value


def empty_is_none(value: Any) -> Any:
    """An empty path variable (``PROTOCOLS_FILE=``) means unset, not the current directory."""
    if isinstance(value, str) and not value.strip():
        return None
    return value


StrList = Annotated[list[str], NoDecode]
FloatList = Annotated[list[float], NoDecode]
StrMap = Annotated[dict[str, str], NoDecode]
SecretList = Annotated[list[SecretStr], NoDecode]


def check_env_file(env_file: str | os.PathLike[str] | None) -> None:
    """An existing ``env_file`` must be a readable UTF-8 text file; else a ConfigError saying where."""
    if env_file is None:
        return
    path = Path(env_file)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return  # no .env is fine: the environment alone configures the run
    except IsADirectoryError:
        raise ConfigError(
            f"{path}: is a directory; the env file must be a text file of NAME=value lines"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the env file: {describe_os_error(exc, path)}") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            f"{path}: not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} (line {line}); "
            "re-save the env file as UTF-8"
        ) from None
