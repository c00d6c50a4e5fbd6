"""What differs between two profiles, key path by key path (``oracleproto profile diff``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from oracleproto.profile.canonical import DESCRIPTIVE_KEYS, profile_to_data
from oracleproto.profile.model import HarnessProfile

_SHOWN = 160


@dataclass(frozen=True)
class ProfileDifference:
    """One key path whose value differs (``absent`` on the side that lacks it)."""

    path: str
    left: str
    right: str
    #: False for ``name``, ``description`` and ``notes``: they change no byte sent.
    behavioural: bool


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _walk(path: str, left: Any, right: Any, out: list[tuple[str, str, str]]) -> None:
    if isinstance(left, dict) and isinstance(right, dict):
        if list(left) != list(right) and set(left) == set(right):
            out.append((f"{path} (key order)", _show(list(left)), _show(list(right))))
        for key in dict.fromkeys([*left, *right]):
            child = f"{path}.{key}" if path else str(key)
            if key not in left:
                out.append((child, "absent", _show(right[key])))
            elif key not in right:
                out.append((child, _show(left[key]), "absent"))
            else:
                _walk(child, left[key], right[key], out)
        return
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            _walk(f"{path}[{index}]", a, b, out)
        return
    # ``True == 1`` in Python: types are compared too, since they are different JSON.
    if type(left) is not type(right) or left != right:
        out.append((path, _show(left), _show(right)))


def diff_profiles(left: HarnessProfile, right: HarnessProfile) -> list[ProfileDifference]:
    """Every differing key path of the canonical forms, in schema order."""
    found: list[tuple[str, str, str]] = []
    _walk("", profile_to_data(left), profile_to_data(right), found)
    return [
        ProfileDifference(path, a, b, path.split(".")[0].split("[")[0] not in DESCRIPTIVE_KEYS)
        for path, a, b in found
    ]
