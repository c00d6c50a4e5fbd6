"""Writable copies of runs for tests that damage or export them: the committed demo, an earlier one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from oracleproto.verify.demo import find_demo_run
from tests.earlier_layout import SOURCE_DB


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


@pytest.fixture
def earlier_copy(earlier_run: Path, tmp_path: Path) -> Path:
    """A private copy of the module's ``earlier_run`` to damage, with its dataset where it is named.

    The dataset goes where the run's config snapshot's SOURCE_DB names it: ``tmp_path`` beside
    ``tmp_path/runs/``. Each module using this fixture defines ``earlier_run`` (module-scoped): the
    earlier-implementation run it writes once, of the size its tests need.
    """
    target = tmp_path / "runs" / earlier_run.name
    shutil.copytree(earlier_run, target)
    shutil.copyfile(earlier_run.parent.parent / SOURCE_DB, tmp_path / SOURCE_DB)
    return target
