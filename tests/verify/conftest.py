"""A writable copy of the committed demo run for tests that damage or export it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from oracleproto.verify.demo import find_demo_run


@pytest.fixture(scope="session")
def demo_run() -> Path:
    """The committed demo run (read only)."""
    return find_demo_run()


@pytest.fixture
def demo_copy(demo_run: Path, tmp_path: Path) -> Path:
    """A private copy of the demo run directory."""
    target = tmp_path / "runs" / demo_run.name
    shutil.copytree(demo_run, target)
    return target
