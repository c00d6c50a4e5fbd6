"""File locks without ``fcntl`` at import time: every module imports where ``fcntl`` does not exist."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from oracleproto.primitives.oslock import lock_exclusive, lock_shared, unlock

IMPORT_ALL_WITHOUT_FCNTL = """
import importlib, pkgutil, sys
sys.modules["fcntl"] = None  # as on Windows: `import fcntl` raises ImportError
import oracleproto
failed = []
for info in pkgutil.walk_packages(oracleproto.__path__, "oracleproto."):
    if info.name == "oracleproto.pytest_plugin":
        continue  # needs pytest, a test-time dependency
    try:
        importlib.import_module(info.name)
    except ImportError as exc:
        failed.append(f"{info.name}: {exc}")
print("\\n".join(failed) or "ok")
"""


def test_every_module_imports_without_fcntl() -> None:
    """``import oracleproto`` (and each sub-module) works on a platform without ``fcntl``."""
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL_WITHOUT_FCNTL],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_exclusive_lock_conflicts_between_handles_and_shared_probe(tmp_path: Path) -> None:
    """A held exclusive lock refuses a second handle's non-blocking attempt, then frees on unlock."""
    path = tmp_path / "lock"
    path.touch()
    with path.open("rb") as first, path.open("rb") as second:
        lock_exclusive(first.fileno(), blocking=False)
        with pytest.raises(BlockingIOError):
            lock_exclusive(second.fileno(), blocking=False)
        with pytest.raises(BlockingIOError):
            lock_shared(second.fileno(), blocking=False)
        unlock(first.fileno())
        lock_shared(second.fileno(), blocking=False)
        unlock(second.fileno())
