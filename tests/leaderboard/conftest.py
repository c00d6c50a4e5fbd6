"""The demo run's leaderboard, built once per session (reading the committed demo run only)."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracleproto.leaderboard import BoardOutput, build_leaderboard
from oracleproto.verify.demo import find_demo_run


@pytest.fixture(scope="session")
def demo_run() -> Path:
    """The committed demo run (read only)."""
    return find_demo_run()


@pytest.fixture(scope="session")
def demo_board(demo_run: Path, tmp_path_factory: pytest.TempPathFactory) -> BoardOutput:
    """The demo's board with its viewer page, written to a temporary folder."""
    return build_leaderboard([("demo", demo_run)], tmp_path_factory.mktemp("board") / "out")
