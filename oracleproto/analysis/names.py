"""How the tables name models: recorded ``MODEL_DISPLAY_NAMES``, a ``--names`` file, grid cells.

The names a run was recorded with live in its ``config_snapshot`` (section ``analysis``), so the
run's own analysis pass, ``verify`` and ``replay`` all derive the same bytes from the DBs alone. A
model without a display name keeps its virtual slug, exactly as before names existed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from oracleproto.analysis.reader import VIRTUAL_SLUG, ModelRun, RunData
from oracleproto.errors import AnalysisError
from oracleproto.primitives.oserrors import describe_os_error
from oracleproto.settings.display_names import cell_display_name, display_name_problems

NAMES_FORMAT = 'a JSON object of real model slug -> display name, e.g. {"vendor/model-x": "Model X"}'


def recorded_display_names(run: RunData) -> dict[str, str]:
    """``MODEL_DISPLAY_NAMES`` as recorded in the run (first model's snapshot); empty when absent."""
    first = run.models[0]
    raw = first.run_meta.get("config_snapshot")
    try:
        snapshot = json.loads(raw) if isinstance(raw, str) else None
    except json.JSONDecodeError:
        return {}  # not ours to judge: the analysis never needed the snapshot before names
    section = snapshot.get("analysis") if isinstance(snapshot, dict) else None
    names = section.get("display_names") if isinstance(section, dict) else None
    if names is None:
        return {}
    where = f"{run.run_dir / 'db' / first.file}: run_meta.config_snapshot analysis.display_names"
    return _checked(names, where)


def load_display_names(path: Path) -> dict[str, str]:
    """Read a ``--names`` file; a clear ``AnalysisError`` for anything but a valid mapping."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AnalysisError(f"names file {path} does not exist; --names takes {NAMES_FORMAT}") from None
    except UnicodeDecodeError as exc:
        raise AnalysisError(
            f"names file {path} is not UTF-8 text (byte at offset {exc.start}); save it as UTF-8 JSON"
        ) from None
    except OSError as exc:
        raise AnalysisError(f"cannot read the names file: {describe_os_error(exc, path)}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AnalysisError(
            f"names file {path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
            f"it must hold {NAMES_FORMAT}"
        ) from None
    return _checked(data, f"names file {path}")


def _checked(data: Any, where: str) -> dict[str, str]:
    if not isinstance(data, dict):
        raise AnalysisError(f"{where}: expected {NAMES_FORMAT}, got a JSON {type(data).__name__}")
    wrong = [key for key, value in data.items() if not isinstance(value, str)]
    if wrong:
        raise AnalysisError(
            f"{where}: the display name of {wrong[0]!r} is not a string; expected {NAMES_FORMAT}"
        )
    problems = display_name_problems(data)
    if problems:
        raise AnalysisError(f"{where}: " + "; ".join(problems))
    return dict(data)


def _cell(slug: str) -> tuple[int, int] | None:
    match = VIRTUAL_SLUG.match(slug)
    return (int(match.group(2)), int(match.group(3))) if match else None


def shown_names(models: tuple[ModelRun, ...], names: Mapping[str, str]) -> dict[str, str]:
    """Virtual slug → what the tables show: the display name (with R and C when the model has
    several grid cells in the run), or the virtual slug when the model has no name."""
    cells_per_model: dict[str, int] = {}
    for m in models:
        cells_per_model[m.real_slug] = cells_per_model.get(m.real_slug, 0) + 1
    shown: dict[str, str] = {}
    for m in models:
        name = names.get(m.real_slug)
        cell = _cell(m.slug)
        if name is None:
            shown[m.slug] = m.slug
        elif cell is None:
            shown[m.slug] = name  # a slug outside the grid layout (an earlier implementation's run)
        else:
            shown[m.slug] = cell_display_name(name, *cell, several_cells=cells_per_model[m.real_slug] > 1)
    taken: dict[str, str] = {}
    for slug, label in shown.items():
        if label in taken:
            raise AnalysisError(
                f"models {taken[label]!r} and {slug!r} would both be shown as {label!r}; "
                "choose a display name that is not another model's slug"
            )
        taken[label] = slug
    return shown


def unmatched_names(real_slugs: Iterable[str], names: Mapping[str, str]) -> list[str]:
    """Slugs of ``names`` that are no real model of the run (a typo names nothing)."""
    real = set(real_slugs)
    return sorted(slug for slug in names if slug not in real)
