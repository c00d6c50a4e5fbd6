"""One cell's R and C, and the grid's lists of them: ``TAVILY_MAX_RESULTS`` / ``GRID_R_LIST`` and
``REACT_MAX_SEARCH_CALLS`` / ``GRID_C_LIST`` name the same thing and must never disagree silently.

The grid lists decide what a run does (every run is a grid, even of one cell); the single values
are what ``init`` and the docs describe as the settings of a one-cell run. So:

- only the single value set → the grid is that one value (``TAVILY_MAX_RESULTS=8`` runs R = 8);
- only the list set → the single value is its first entry, the default cell's (what ``render``
  and the budget footer show);
- both set and the single value is not the list's first → refused, naming both.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from oracleproto.errors import ConfigError

#: (single section, single field, its variable, list field, its variable).
_PAIRS = (
    ("search", "max_results", "TAVILY_MAX_RESULTS", "grid_r_list", "GRID_R_LIST"),
    ("react", "max_search_calls", "REACT_MAX_SEARCH_CALLS", "grid_c_list", "GRID_C_LIST"),
)


def _shown(values: list[int]) -> str:
    return ",".join(str(v) for v in values)


def reconcile_grid(sections: dict[str, Any]) -> dict[str, Any]:
    """``sections`` (name → section) with each single value and its grid list made to agree."""
    out = dict(sections)
    problems: list[str] = []
    for name, single, single_var, grid, grid_var in _PAIRS:
        section: BaseModel = out[name]
        run: BaseModel = out["run"]
        value: int = getattr(section, single)
        values: list[int] = list(getattr(run, grid))
        single_set, grid_set = single in section.model_fields_set, grid in run.model_fields_set
        if single_set and not grid_set:
            out["run"] = run.model_copy(update={grid: [value]})
        elif grid_set and not single_set and values:
            out[name] = section.model_copy(update={single: values[0]})
        elif single_set and grid_set and values and values[0] != value:
            problems.append(
                f"{single_var}={value} and {grid_var}={_shown(values)} disagree: {single_var} is the value "
                f"of a one-cell run, {grid_var} the values of the grid (its first is the default cell); set "
                f"only one of them, or start {grid_var} with {value}"
            )
    if problems:
        raise ConfigError("invalid settings:\n" + "\n".join(f"  - {p}" for p in problems))
    return out
