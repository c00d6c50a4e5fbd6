"""Fixtures: synthetic run directories written by ``builder`` (fictional questions)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from builder import CUT, EMPTY, ERR, FAIL, RunSpec, ok, write_run

SEARCH = (
    {
        "query": "x",
        "end_date": "2025-12-01",
        "n_results": 2,
        "published_dates": [],
        "n_results_raw": 3,
        "n_results_kept": 2,
        "detector_verdicts": ["keep", "keep", "drop"],
    },
    {"query": "y", "end_date": "2025-12-01", "n_results": 0, "published_dates": [], "error_kind": "network"},
)

ALPHA = "vendor-a/alpha::r5::c4"
BETA = "vendor-b/beta::r5::c4"


def main_spec() -> RunSpec:
    """Two models, n = 3: parse failures, call errors, cutoffs, multi overlaps, an empty bucket."""
    return RunSpec(
        n=3,
        models={
            ALPHA: {
                "q1": [ok("A", search=SEARCH), ok("A"), ok("B")],
                "q2": [ok("B"), FAIL, ERR],
                "q3": [ok("B"), ok("B"), ok("B")],
                "q4": [ok("C"), ok("D"), CUT],
                "q5": [ok("B"), ok("C"), ok("A")],
                "q6": [ok("A"), ok("A,C"), ok("A,B")],
                "q7": [ok("B,C"), ok("B,C,D"), ok("B,C")],
            },
            BETA: {
                "q1": [ok("B"), ok("B"), ok("B")],
                "q2": [ok("B"), ok("B"), ok("A")],
                "q3": [CUT, CUT, CUT],
                "q4": [ok("C", prompt=300), ok("C"), ok("C")],
                "q5": [ok("A"), ok("A"), ok("B")],
                "q6": [ok("A,C,E"), ok("A,C"), FAIL],
                "q7": [ERR, ERR, ERR],
            },
        },
    )


@pytest.fixture
def main_run(tmp_path: Path) -> Path:
    """The two-model n = 3 run."""
    return write_run(tmp_path, main_spec())


@pytest.fixture
def prices_file(tmp_path: Path) -> Path:
    """A JSON price table for both models, search and detector."""
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps(
            {
                "vendor-a/alpha": {"input_usd_per_million": 100.0, "output_usd_per_million": 400.0},
                "vendor-b/beta": {"input_usd_per_million": 50.0, "output_usd_per_million": 200.0},
                "search": {"usd_per_call": 0.008},
                "detector": {"usd_per_call": 0.001},
            }
        ),
        encoding="utf-8",
    )
    return path


__all__ = ["CUT", "EMPTY", "ERR", "FAIL", "main_spec"]
