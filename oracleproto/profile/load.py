"""Read a harness profile from a JSON file (``HARNESS_PROFILE`` / ``--profile``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oracleproto.errors import ConfigError
from oracleproto.profile.builtin import builtin_profile
from oracleproto.profile.model import HarnessProfile
from oracleproto.profile.parse import profile_from_data
from oracleproto.prompts.text_file import read_text_file

PROFILE_SETTING = "HARNESS_PROFILE"
#: What ``--profile`` / ``HARNESS_PROFILE`` may say instead of a path.
BUILTIN_WORD = "builtin"


class _DuplicateKeyError(ValueError):
    pass


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
        data = json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKeyError as exc:
        raise ConfigError(
            f"{source}: the key {exc.args[0]!r} appears twice in one object; keep one"
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
            "a harness profile is one JSON object"
        ) from None
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply to be a harness profile") from None
    return profile_from_data(data, source=source)


def load_profile(path: Path, *, setting: str = PROFILE_SETTING) -> HarnessProfile:
    """The profile in ``path`` (UTF-8 JSON, at most 1 MiB), or the built-in one for ``builtin``."""
    if str(path) == BUILTIN_WORD:
        return builtin_profile()
    text = read_text_file(path, setting=setting)
    return parse_profile_text(text, source=f"{setting} {path}")
