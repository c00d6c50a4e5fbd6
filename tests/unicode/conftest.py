"""The hostile run, recorded once per session (about 10 s) and shared by the chain tests."""

from __future__ import annotations

import pytest

from tests.unicode.recording import HostileRun, record_hostile_run


@pytest.fixture(scope="session")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> HostileRun:
    """One recorded run carrying every hostile input in every untrusted field."""
    return record_hostile_run(tmp_path_factory.mktemp("hostile"))
