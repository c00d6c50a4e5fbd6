"""Read a harness profile from a JSON file (``HARNESS_PROFILE`` / ``--profile``)."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from oracleproto.errors import ConfigError
from oracleproto.primitives.safe_text import escape_surrogates, has_surrogate
from oracleproto.profile.builtin import builtin_profile
from oracleproto.profile.model import HarnessProfile
from oracleproto.profile.parse import profile_from_data
from oracleproto.prompts.text_file import read_text_file

PROFILE_SETTING = "HARNESS_PROFILE"
#: What ``--profile`` / ``HARNESS_PROFILE`` may say instead of a path.
BUILTIN_WORD = "builtin"


class _DuplicateKeyError(ValueError):
    pass


class _NotJsonNumberError(ValueError):
    pass


def _finite(text: str) -> float:
    # Python's json reads 1e999 as inf: a value the fingerprint (and a request body) cannot write.
    value = float(text)
    if not math.isfinite(value):
        raise _NotJsonNumberError(text)
    return value


def _no_constant(name: str) -> Any:
    raise _NotJsonNumberError(name)


def _surrogate_path(value: Any, path: str = "") -> str | None:
    """The key path of the first string (key or value) holding a lone surrogate, else None."""
    if isinstance(value, str):
        return (path or "<top level>") if has_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{path}.{key}" if path else key
            if has_surrogate(key):
                return inner
            if (found := _surrogate_path(item, inner)) is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if (found := _surrogate_path(item, f"{path}[{index}]")) is not None:
                return found
    return None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # JSON allows repeated keys and Python keeps the last: a profile with two "marker" keys would
    # silently send one of them. Refused instead.
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKeyError(key)
        seen[key] = value
    return seen


def parse_profile_text(text: str, *, source: str) -> HarnessProfile:
    """The profile a JSON text holds; ConfigError naming ``source`` (JSON errors with line/column)."""
    try:
        data = json.loads(
            text, object_pairs_hook=_no_duplicates, parse_float=_finite, parse_constant=_no_constant
        )
    except _DuplicateKeyError as exc:
        raise ConfigError(
            f"{source}: the key {exc.args[0]!r} appears twice in one object; keep one"
        ) from None
    except _NotJsonNumberError as exc:
        raise ConfigError(
            f"{source}: {exc.args[0]} is not a JSON number (JSON has no NaN or infinity, and the "
            "value must fit a double); write a finite number"
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
            "a harness profile is one JSON object"
        ) from None
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply to be a harness profile") from None
    except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
        raise ConfigError(
            f"{source}: a number has more than {sys.get_int_max_str_digits()} digits; write a shorter one"
        ) from None
    try:
        where = _surrogate_path(data)
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply to be a harness profile") from None
    if where is not None:
        raise ConfigError(
            f"{source}: {escape_surrogates(where)}: holds an escaped lone surrogate (a \\uD800-\\uDFFF "
            "escape without its pair), which UTF-8 cannot carry; write the character itself or remove "
            "the escape"
        )
    return profile_from_data(data, source=source)


def load_profile(path: Path, *, setting: str = PROFILE_SETTING) -> HarnessProfile:
    """The profile in ``path`` (UTF-8 JSON, at most 1 MiB), or the built-in one for ``builtin``."""
    if str(path) == BUILTIN_WORD:
        return builtin_profile()
    text = read_text_file(path, setting=setting)
    return parse_profile_text(text, source=f"{setting} {path}")
