"""pytest plugin: run pipeline pieces against cassettes (``pytest11`` entry point ``oracleproto``).

``--oracleproto-mode=replay|record|refresh`` (default ``replay``). Fixtures give each test a
``RecordReplay`` bound to ``<rootdir>/tests/cassettes/<module>/<test>/`` and one
``httpx.AsyncClient`` per channel over it. In replay mode the fixtures block every socket for
the test (pytest-socket when installed, else a patched ``socket.socket.connect``), so a test that
passes in replay is proven offline.

The client fixtures are async: they are declared with ``pytest_asyncio.fixture`` (function loop
scope), so they work under pytest-asyncio's default strict mode, no ``asyncio_mode = auto`` needed.
At teardown the fixtures remove the cassette folder's lock file, so recording leaves only the
cassettes themselves in ``tests/cassettes/``, and the client fixtures close the connections a
recording opened (an async client built on ``oracleproto_recorder`` directly should end with
``await oracleproto_recorder.release_live_async()``).
"""

from __future__ import annotations

import re
import socket
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from oracleproto.primitives.clock import SystemClock
from oracleproto.primitives.oslock import lock_exclusive, unlock
from oracleproto.transport import RecordReplay
from oracleproto.transport.layout import LOCK_FILE
from oracleproto.transport.recorder import MODES, Mode

try:
    import pytest_asyncio

    # Strict mode (pytest-asyncio's default) only runs async fixtures declared through it.
    _async_fixture: Callable[..., Any] = pytest_asyncio.fixture(loop_scope="function")
except ImportError:  # pragma: no cover - the async fixtures then need another asyncio plugin
    _async_fixture = pytest.fixture

CASSETTE_ROOT_INI = "oracleproto_cassette_root"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class NetworkBlockedError(RuntimeError):
    """A test in replay mode tried to open a connection."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register ``--oracleproto-mode`` and the cassette root ini option."""
    group = parser.getgroup("oracleproto")
    group.addoption(
        "--oracleproto-mode",
        choices=list(MODES),
        default="replay",
        help="record/replay mode of the oracleproto fixtures (default: replay, network blocked)",
    )
    parser.addini(CASSETTE_ROOT_INI, "cassette root, relative to rootdir", default="tests/cassettes")


@pytest.fixture
def oracleproto_mode(request: pytest.FixtureRequest) -> Mode:
    """The record/replay mode chosen on the command line."""
    mode: Mode = request.config.getoption("--oracleproto-mode")
    return mode


@pytest.fixture
def oracleproto_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """``<rootdir>/<cassette root>/<module>/<test>/`` for the requesting test."""
    root = request.config.rootpath / str(request.config.getini(CASSETTE_ROOT_INI))
    module = Path(str(request.node.path)).stem
    return root / module / _UNSAFE.sub("_", request.node.name)


def _block_connect() -> Callable[[], None]:
    try:
        import pytest_socket
    except ImportError:
        original = socket.socket.connect

        def refuse(self: socket.socket, *args: Any) -> None:
            raise NetworkBlockedError(f"oracleproto replay mode: connection to {args!r} blocked")

        socket.socket.connect = refuse  # type: ignore[method-assign,assignment]

        def restore() -> None:
            socket.socket.connect = original  # type: ignore[method-assign]

        return restore
    pytest_socket.disable_socket(allow_unix_socket=True)
    return pytest_socket.enable_socket


@pytest.fixture
def oracleproto_offline(oracleproto_mode: Mode) -> Iterator[bool]:
    """Block sockets for the test when in replay mode; yields whether they are blocked."""
    if oracleproto_mode != "replay":
        yield False
        return
    restore = _block_connect()
    try:
        yield True
    finally:
        restore()


@pytest.fixture
def oracleproto_recorder(
    oracleproto_mode: Mode, oracleproto_cassette_dir: Path, oracleproto_offline: bool
) -> Iterator[RecordReplay]:
    """A ``RecordReplay`` over the test's cassette directory; compacted and closed at teardown."""
    if oracleproto_mode == "replay" and not oracleproto_cassette_dir.is_dir():
        pytest.fail(
            f"no cassettes at {oracleproto_cassette_dir}; record them first with --oracleproto-mode=record"
        )
    recorder = RecordReplay(oracleproto_cassette_dir, clock=SystemClock(), mode=oracleproto_mode)
    try:
        yield recorder
    finally:
        recorder.close()
        _remove_idle_lock(oracleproto_cassette_dir / LOCK_FILE)


def _remove_idle_lock(path: Path) -> None:
    """Delete the cassette folder's lock file unless another process holds it now.

    The lock only serialises writers while they rewrite files; once this test's recorder has
    closed, the empty file is clutter in the user's repository. Unlinked while held, so a writer
    that holds it at this moment is never pulled from under.
    """
    try:
        handle = path.open("rb")
    except OSError:
        return
    with handle:
        try:
            lock_exclusive(handle.fileno(), blocking=False)
        except OSError:
            return  # in use by a concurrent writer: it is theirs to keep
        try:
            path.unlink(missing_ok=True)
        finally:
            unlock(handle.fileno())


async def _client(recorder: RecordReplay, channel: Any) -> AsyncIterator[httpx.AsyncClient]:
    client = httpx.AsyncClient(transport=recorder.transport(channel))
    try:
        yield client
    finally:
        await client.aclose()
        # The recorder's live connections (record and refresh modes) belong to this test's event
        # loop: closed here, on it. The recorder fixture's synchronous close runs when the loop may
        # be gone, and left to the garbage collector they would warn "unclosed transport" in
        # whichever later test it ran.
        await recorder.release_live_async()


@_async_fixture
async def oracleproto_llm_client(oracleproto_recorder: RecordReplay) -> AsyncIterator[httpx.AsyncClient]:
    """``httpx.AsyncClient`` on the llm channel of the test's cassettes."""
    async for client in _client(oracleproto_recorder, "llm"):
        yield client


@_async_fixture
async def oracleproto_search_client(oracleproto_recorder: RecordReplay) -> AsyncIterator[httpx.AsyncClient]:
    """``httpx.AsyncClient`` on the search channel of the test's cassettes."""
    async for client in _client(oracleproto_recorder, "search"):
        yield client


@_async_fixture
async def oracleproto_detector_client(oracleproto_recorder: RecordReplay) -> AsyncIterator[httpx.AsyncClient]:
    """``httpx.AsyncClient`` on the detector channel of the test's cassettes."""
    async for client in _client(oracleproto_recorder, "detector"):
        yield client
