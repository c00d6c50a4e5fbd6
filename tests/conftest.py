"""Shared test configuration: golden snapshots live under the top-level ``golden/``."""

from __future__ import annotations

import gc
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.amber import AmberSnapshotExtension
from syrupy.location import PyTestLocation

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
GOLDEN = ROOT / "golden"
pytest_plugins = ["tests.browser", "tests.plot_memo", "tests.cassette_memo", "tests.tls_memo"]

# What the console script sets for every command (cli/main.py:limit_blas_threads), set here for the
# test processes and the workers they spawn (a replay's plot and shard workers started in-process),
# whose numpy would otherwise start a BLAS thread per core. Set before xdist starts its workers.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Leave what collection built out of the garbage collector's full passes, in every worker.

    Collection leaves about 140,000 objects that live as long as the session (modules, functions,
    test items, the package's and its dependencies' tables), and every full collection walked all
    of them again. ``gc.freeze`` moves them to a permanent generation the collector skips; objects
    the tests create are collected as before. (A frozen object is still freed when its last
    reference goes; only a garbage cycle through a frozen object would be kept to the session's end.)
    """
    gc.collect()
    gc.freeze()


SHARED = ROOT.parent / "shared"
SHARED_DB = SHARED / "datasets" / "oracleproto-80.db"
SHARED_PAYLOADS = SHARED / "fixtures" / "real-payloads"
SHARED_EARLIER = SHARED / "fixtures" / "earlier-harness"


class GoldenExtension(AmberSnapshotExtension):
    """Amber snapshots stored in ``golden/<test path>/`` instead of ``__snapshots__``."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        relative = Path(test_location.filepath).resolve().parent.relative_to(TESTS)
        return str(GOLDEN / relative)


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """Syrupy's snapshot fixture, writing under ``golden/``."""
    return snapshot.use_extension(GoldenExtension)


@pytest.fixture(scope="session")
def shared_db() -> Path:
    """The paper's 80-question set, read in place from ../shared (never copied)."""
    if not SHARED_DB.exists():
        pytest.fail(f"{SHARED_DB} is missing: tests need ../shared beside the repository")
    return SHARED_DB


@pytest.fixture(scope="session")
def shared_payloads() -> Path:
    """The real recorded provider payloads under ../shared/fixtures/real-payloads."""
    if not SHARED_PAYLOADS.exists():
        pytest.fail(f"{SHARED_PAYLOADS} is missing: tests need ../shared beside the repository")
    return SHARED_PAYLOADS


@pytest.fixture(scope="session")
def earlier_harness() -> Path:
    """The earlier implementation's fixtures under ../shared/fixtures/earlier-harness (read in place)."""
    if not SHARED_EARLIER.exists():
        pytest.fail(f"{SHARED_EARLIER} is missing: tests need ../shared beside the repository")
    return SHARED_EARLIER


@pytest.fixture
def closed_port() -> Iterator[int]:
    """A loopback port that refuses every connection for the whole test.

    The socket stays bound but never listens (Linux answers a connection to it with a reset), so no
    other test or xdist worker can take the port meanwhile, as it could one bound and released.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        yield port
