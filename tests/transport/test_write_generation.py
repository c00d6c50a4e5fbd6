"""Which cassette generation a refresh writes: a new one, or (resuming) the newest one."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracleproto.errors import ConfigError
from oracleproto.primitives.clock import FakeClock
from oracleproto.transport import RecordReplay


def test_refresh_writes_a_new_generation_or_resumes_the_newest(tmp_path: Path) -> None:
    (tmp_path / "generations" / "0001").mkdir(parents=True)  # a refresh already wrote generation 1
    for requested, expected in ((None, 2), (2, 2), (1, 1)):
        with RecordReplay(tmp_path, clock=FakeClock(), mode="refresh", write_generation=requested) as cache:
            assert cache.store.write_generation == expected


@pytest.mark.parametrize(("mode", "requested", "message"), [
    ("refresh", 3, "writes generation 2 \\(or resumes generation 1\\); 3 is neither"),
    ("refresh", 0, "0 is neither"),
    ("record", 1, "write_generation is for refresh mode only"),
])  # fmt: skip
def test_any_other_generation_is_refused(tmp_path: Path, mode: str, requested: int, message: str) -> None:
    (tmp_path / "generations" / "0001").mkdir(parents=True)
    with pytest.raises(ConfigError, match=message):
        RecordReplay(tmp_path, clock=FakeClock(), mode=mode, write_generation=requested)  # type: ignore[arg-type]
