"""The task plan: grid cells × questions × samples, admission decided before any network call.

Pure: given questions, models, cutoffs and the grid, say which (cell, question, sample) slots
need the model and which are excluded by the training cutoff, with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from oracleproto.dataset.admission import Admission, admissible
from oracleproto.dataset.models import Question
from oracleproto.errors import ConfigError
from oracleproto.settings.model import Settings
from oracleproto.store.naming import virtual_slug


@dataclass(frozen=True)
class GridCell:
    """One grid cell: a real model with R results per search and a cap of C searches."""

    real_model: str
    results_per_search: int
    max_search_calls: int

    @property
    def virtual_slug(self) -> str:
        """``{real}::r{R}::c{C}`` — the name every run file uses for this cell."""
        return virtual_slug(self.real_model, self.results_per_search, self.max_search_calls)


@dataclass(frozen=True)
class QuestionPlan:
    """One question for one cell: its admission and the prediction cutoff χ."""

    question: Question
    admission: Admission


@dataclass(frozen=True)
class CellPlan:
    """Everything one cell (one per-model database) will contain."""

    cell: GridCell
    training_cutoff: date
    questions: tuple[QuestionPlan, ...]

    @property
    def admitted(self) -> tuple[QuestionPlan, ...]:
        """Questions the model may be asked."""
        return tuple(q for q in self.questions if q.admission.admitted)

    @property
    def excluded(self) -> tuple[QuestionPlan, ...]:
        """Questions excluded by the training cutoff, with their reason."""
        return tuple(q for q in self.questions if not q.admission.admitted)


@dataclass(frozen=True)
class RunPlan:
    """The whole plan, cells in plan order (models × R × C)."""

    cells: tuple[CellPlan, ...]
    sampling_n: int

    @property
    def virtual_slugs(self) -> tuple[str, ...]:
        """Virtual slugs in plan order (the manifest's ``models``)."""
        return tuple(c.cell.virtual_slug for c in self.cells)

    def total_slots(self) -> int:
        """Number of (cell, question, sample) slots, excluded ones included."""
        return sum(len(c.questions) for c in self.cells) * self.sampling_n


def build_plan(
    questions: Sequence[Question],
    *,
    real_models: Sequence[str],
    training_cutoffs: Mapping[str, date],
    r_list: Sequence[int],
    c_list: Sequence[int],
    sampling_n: int,
    delta_days: int,
) -> RunPlan:
    """Admission first: every cell's questions with their verdicts, before any network call."""
    missing = [m for m in real_models if m not in training_cutoffs]
    if missing:
        raise ConfigError(
            "MODEL_TRAINING_CUTOFFS has no cutoff for "
            + ", ".join(repr(m) for m in missing)
            + "; add e.g. 'slug=2026-02' (month granularity means the last day of that month)"
        )
    if not real_models:
        raise ConfigError(
            "no models to run; set MODELS (or run --models, or [llm] models in oracleproto.toml)"
        )
    if not r_list or not c_list:
        raise ConfigError("the grid is empty; set GRID_R_LIST and GRID_C_LIST")
    cells: list[CellPlan] = []
    for model in real_models:
        cutoff = training_cutoffs[model]
        verdicts = tuple(QuestionPlan(q, admissible(q, cutoff, delta_days=delta_days)) for q in questions)
        for r in r_list:
            for c in c_list:
                cells.append(CellPlan(GridCell(model, r, c), cutoff, verdicts))
    return RunPlan(tuple(cells), sampling_n)


def plan_for_settings(
    questions: Sequence[Question], settings: Settings, training_cutoffs: Mapping[str, date]
) -> RunPlan:
    """:func:`build_plan` with the models, grid, n and δ of ``settings`` (run and dry run alike)."""
    return build_plan(
        questions,
        real_models=settings.llm.models,
        training_cutoffs=training_cutoffs,
        r_list=settings.run.grid_r_list,
        c_list=settings.run.grid_c_list,
        sampling_n=settings.run.sampling_n,
        delta_days=settings.run.delta_days,
    )
