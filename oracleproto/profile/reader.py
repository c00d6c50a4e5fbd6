"""Typed reads of parsed JSON that collect every problem with its key path, instead of stopping.

Each problem names the path (``texts.injections.nudge``, ``tool_calls.checks[2]``) and says what
is wrong and what would be right, so one ``profile validate`` lists everything to fix at once.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from oracleproto.profile.placeholders import unknown_names

_TYPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    str: "a string",
    list: "an array",
    dict: "an object",
    type(None): "null",
    float: "a number",
}


def json_type(value: Any) -> str:
    """How a JSON value's type is named in messages."""
    return _TYPE_NAMES.get(type(value), type(value).__name__)


def _listed(names: Collection[str]) -> str:
    return ", ".join(repr(n) for n in names) if names else "(none)"


class Reader:
    """Collects problems while reading one document."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        #: Keys reported missing: reading them later (as null) would report them a second time.
        self._missing: set[str] = set()

    def problem(self, path: str, text: str) -> None:
        """Record one problem at ``path`` (none at or under a key already reported missing)."""
        if any(path == gone or path.startswith((f"{gone}.", f"{gone}[")) for gone in self._missing):
            return
        self.problems.append(f"{path or '<top level>'}: {text}")

    def obj(
        self,
        path: str,
        value: Any,
        required: Sequence[str],
        optional: Sequence[str] = (),
    ) -> dict[str, Any] | None:
        """``value`` as an object with exactly these keys (unknown and missing ones reported)."""
        if not isinstance(value, dict):
            self.problem(path, f"must be an object, got {json_type(value)}")
            return None
        known = (*required, *optional)
        for key in value:
            if key not in known:
                self.problem(_join(path, key), f"unknown key; the keys here are {_listed(known)}")
        for key in required:
            if key not in value:
                self.problem(_join(path, key), "missing; add it (see docs/harness-profile.md)")
                self._missing.add(_join(path, key))
        return value

    def string(self, path: str, value: Any) -> str | None:
        """``value`` as a string."""
        if not isinstance(value, str):
            self.problem(path, f"must be a string, got {json_type(value)}")
            return None
        return value

    def boolean(self, path: str, value: Any) -> bool | None:
        """``value`` as a boolean."""
        if not isinstance(value, bool):
            self.problem(path, f"must be true or false, got {json_type(value)}")
            return None
        return value

    def choice(self, path: str, value: Any, choices: Sequence[str]) -> str | None:
        """``value`` as one of the string ``choices``."""
        if not isinstance(value, str) or value not in choices:
            shown = repr(value) if isinstance(value, str) else json_type(value)
            self.problem(path, f"must be one of {_listed(choices)}, got {shown}")
            return None
        return value

    def text(self, path: str, value: Any, allowed: Collection[str], *, nullable: bool = False) -> str | None:
        """A text: a string whose ``{{name}}`` placeholders are all allowed here."""
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            expected = "a string or null" if nullable else "a string"
            self.problem(path, f"must be {expected}, got {json_type(value)}")
            return None
        for name in unknown_names(value, allowed):
            hint = (
                f"the placeholders of this text are {_listed(sorted(allowed))}"
                if allowed
                else ("this text takes no placeholders")
            )
            self.problem(path, f"unknown placeholder {{{{{name}}}}}; {hint}")
        return value

    def names(
        self, path: str, value: Any, choices: Sequence[str], *, unique: bool = True
    ) -> tuple[str, ...] | None:
        """An array of names, each one of ``choices`` (no repeats when ``unique``)."""
        if not isinstance(value, list):
            self.problem(path, f"must be an array of names, got {json_type(value)}")
            return None
        out: list[str] = []
        ok = True
        for index, item in enumerate(value):
            where = f"{path}[{index}]"
            name = self.choice(where, item, choices)
            if name is None:
                ok = False
                continue
            if unique and name in out:
                self.problem(where, f"{name!r} is listed twice; list each name once")
                ok = False
            out.append(name)
        return tuple(out) if ok else None

    def strings(self, path: str, value: Any) -> tuple[str, ...] | None:
        """An array of strings."""
        if not isinstance(value, list):
            self.problem(path, f"must be an array of strings, got {json_type(value)}")
            return None
        bad = [i for i, item in enumerate(value) if not isinstance(item, str)]
        for index in bad:
            self.problem(f"{path}[{index}]", f"must be a string, got {json_type(value[index])}")
        return None if bad else tuple(value)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key
