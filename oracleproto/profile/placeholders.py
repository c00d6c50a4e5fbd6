"""``{{name}}`` placeholders of profile texts, exactly as the schema defines them.

The only placeholder is ``{{name}}`` with a name of ``a-z`` and ``_``; everything else (single
braces, backslashes, ``%``, ``\\boxed{...}``, ``{{ spaced }}``) is literal text. Filling is one
pass, so a filled value that itself holds ``{{x}}`` is never expanded again.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

_TOKEN = re.compile(r"\{\{([a-z_]+)\}\}")

#: The per-sample counters every status text may use (§1), except ``min_search_calls`` (nudge only).
COUNTERS: tuple[str, ...] = (
    "step",
    "max_steps",
    "steps_left_including_current",
    "steps_left_after_current",
    "used",
    "max_search_calls",
    "searches_left",
)


def names_in(text: str) -> list[str]:
    """The placeholder names of ``text``, in order of appearance (repeats kept)."""
    return [match.group(1) for match in _TOKEN.finditer(text)]


def unknown_names(text: str, allowed: Collection[str]) -> list[str]:
    """The placeholder names of ``text`` that are not allowed (first-seen order, no repeats)."""
    return list(dict.fromkeys(name for name in names_in(text) if name not in allowed))


def uses(text: str | None, name: str) -> bool:
    """True when ``text`` holds the placeholder ``{{name}}``."""
    return text is not None and ("{{" + name + "}}") in text


def fill(text: str, values: Mapping[str, str]) -> str:
    """``text`` with each ``{{name}}`` that ``values`` holds replaced, in a single pass."""

    def replace(match: re.Match[str]) -> str:
        value = values.get(match.group(1))
        return match.group(0) if value is None else value

    return _TOKEN.sub(replace, text)


def format_spelling(text: str) -> str:
    """``text`` in Python ``str.format`` spelling: ``{{name}}`` → ``{name}``, other braces doubled."""
    out: list[str] = []
    last = 0
    for match in _TOKEN.finditer(text):
        out.append(text[last : match.start()].replace("{", "{{").replace("}", "}}"))
        out.append("{" + match.group(1) + "}")
        last = match.end()
    out.append(text[last:].replace("{", "{{").replace("}", "}}"))
    return "".join(out)
