"""Plots drawn once per test worker for each distinct input (a pytest plugin of the suite).

Drawing the analysis's plots (300 dpi PNG, then SVG) is a fifth of the suite's CPU time, and most
of it draws the same figures again: every run recorded from the same simulator seed, every replay
and every ``verify`` regeneration of a run draws what an earlier test of the worker already drew.
``write_plots``'s bytes are a function of what it reads from the result (the demo's byte-for-byte
replays and ``verify``'s regeneration prove it, each in a process of its own, where this memo
does not reach), so a worker keeps them by the digest of those inputs and writes them again.

A test that looks inside the drawing (spies on matplotlib, patches part of ``plots``) is marked
``plots_drawn``: it always draws. ``ORACLEPROTO_TEST_PLOT_MEMO=0`` turns the memo off for a whole
session (every plot drawn, as before). The memo lives in test workers only; the product draws
every time.
"""

from __future__ import annotations

import hashlib
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.worker_memo import installed, off_when_marked

MARKER = "plots_drawn"
ENV_VAR = "ORACLEPROTO_TEST_PLOT_MEMO"
Drawn = list[tuple[str, bytes]]


class PlotMemo:
    """``write_plots`` with its files kept by the digest of the inputs it reads."""

    def __init__(self, draw: Callable[[Any, Path], list[Path]]) -> None:
        self.draw = draw
        self.kept: dict[str, Drawn] = {}
        self.enabled = True

    @staticmethod
    def key(result: Any) -> str:
        """Digest of everything ``write_plots`` reads: the result's plotted fields and matplotlib's rc."""
        import matplotlib

        read = (
            result.convention.value,
            result.models,
            result.model_order,
            result.display_names,
            sorted((k, repr(v)) for k, v in matplotlib.rcParams.items()),
        )
        return hashlib.sha256(pickle.dumps(read, protocol=5)).hexdigest()

    def __call__(self, result: Any, out: Path) -> list[Path]:
        if not self.enabled:
            return self.draw(result, out)
        key = self.key(result)
        drawn = self.kept.get(key)
        if drawn is None:
            paths = self.draw(result, out)
            self.kept[key] = [(p.name, p.read_bytes()) for p in paths]
            return paths
        written = []
        for name, data in drawn:
            (out / name).write_bytes(data)
            written.append(out / name)
        return written


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}: draws the analysis's plots for real (no per-worker memo)")


@pytest.fixture(scope="session", autouse=True)
def _plot_memo() -> Iterator[PlotMemo]:
    from oracleproto.analysis import plots

    yield from installed(PlotMemo(plots.write_plots), plots, "write_plots", ENV_VAR)


@pytest.fixture(autouse=True)
def _plots_drawn_when_marked(request: pytest.FixtureRequest, _plot_memo: PlotMemo) -> Iterator[None]:
    yield from off_when_marked(request, _plot_memo, MARKER)
