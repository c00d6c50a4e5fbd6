"""Model display names (``MODEL_DISPLAY_NAMES``, ``report --names``): the rules a mapping must meet.

Tables name models the way the paper does ("DeepSeek-V3.2-Exp") instead of by provider slug. A
name is presentation only, but it must still tell models apart and keep every table row intact,
so: keys are real slugs (a grid cell is named from its real model), names are non-empty, carry no
control character or line break (a Markdown or CSV row would break), no edge spaces, no ``::``
(reserved for grid cells, so a name can never equal an unnamed cell's slug), and no two slugs
share a name. Pure: used by the settings and by the analysis when it reads a names file.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping

GRID_SEPARATOR = "::"


def _has_control(text: str) -> bool:
    # Cs: a lone surrogate (from a JSON escape) cannot be written as UTF-8 nor drawn in a plot.
    return any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") for ch in text)


def display_name_problems(names: Mapping[str, str]) -> list[str]:
    """Everything wrong with a slug → display-name mapping, one message each (empty when fine)."""
    problems: list[str] = []
    for slug, name in names.items():
        if not slug.strip():
            problems.append("an empty model slug; keys are real model slugs such as 'vendor/model'")
        elif GRID_SEPARATOR in slug:
            problems.append(
                f"{slug!r}: name the real model slug, without '::rR::cC'; each grid cell is named from it"
            )
        if not name.strip():
            problems.append(f"{slug!r}: the display name is empty")
        elif name != name.strip():
            problems.append(f"{slug!r}: the display name {name!r} starts or ends with a space")
        elif _has_control(name):
            problems.append(
                f"{slug!r}: the display name {name!r} holds a line break or control character "
                "(or a lone surrogate); remove it"
            )
        elif GRID_SEPARATOR in name:
            problems.append(f"{slug!r}: the display name {name!r} contains '::', reserved for grid cells")
    by_name: dict[str, list[str]] = {}
    for slug, name in names.items():
        by_name.setdefault(name, []).append(slug)
    for name, slugs in by_name.items():
        if len(slugs) > 1 and name.strip():
            shown = ", ".join(repr(s) for s in slugs)
            problems.append(f"{shown} are all named {name!r}; display names must tell models apart")
    return problems


def cell_display_name(name: str, results_per_search: int, max_search_calls: int, several_cells: bool) -> str:
    """How a grid cell of a named model is shown: the name, plus R and C when the model has several cells."""
    return f"{name} (R={results_per_search}, C={max_search_calls})" if several_cells else name
