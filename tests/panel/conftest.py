from __future__ import annotations

from pathlib import Path

import pytest

from tests.panel.support import Recorded, record_all


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The experiment's shards and its single run, recorded once for the module."""
    return record_all(tmp_path_factory.mktemp("panel-runs"))


@pytest.fixture
def tree(recorded: Recorded, tmp_path: Path) -> Recorded:
    """A private copy of the recording."""
    from tests.panel.support import copy_tree

    return copy_tree(recorded, tmp_path / "runs")
