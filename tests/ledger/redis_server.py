"""A real Redis server for the ledger tests: Debian's ``redis-server`` on 127.0.0.1, a free port.

Without the binary the tests skip with the one-line install; CI sets ``ORACLEPROTO_REQUIRE_REDIS=1``
(``.ci/run`` installs it) so a missing server fails instead. The server keeps an append-only file
synced on every write in its own folder, as a production ledger should: killed with SIGKILL and
started again on the same port and folder, it still holds every count.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

INSTALL_HINT = (
    "ledger tests need Debian's redis-server: `apt-get install -y redis-server`; `.ci/run` installs it"
)
#: Generous: the machine is shared and may be loaded.
START_TIMEOUT_S = 60.0


def redis_binary() -> str:
    """``redis-server``'s path, or skip (fail when ``ORACLEPROTO_REQUIRE_REDIS=1``)."""
    found = shutil.which("redis-server")
    if found is not None:
        return found
    if os.environ.get("ORACLEPROTO_REQUIRE_REDIS") == "1":
        pytest.fail(f"redis-server not found; {INSTALL_HINT}")
    pytest.skip(f"redis-server not found; {INSTALL_HINT}")


def free_port() -> int:
    """A loopback port nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _serves(port: int, folder: Path) -> bool:
    """The server on ``port`` answers and keeps its data in ``folder``: it is this test's server,
    not one that another test (or pytest-xdist worker) started on a port it also found free."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(b"CONFIG GET dir\r\n")
            reply = sock.recv(4096)
    except OSError:
        return False
    return f"\r\n{os.path.realpath(folder)}\r\n".encode() in reply


def wait_for(condition: object, what: str, timeout_s: float = START_TIMEOUT_S) -> None:
    """Poll ``condition()`` until true; fail naming ``what`` after ``timeout_s``."""
    assert callable(condition)
    ends = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > ends:
            pytest.fail(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(0.05)


@dataclass
class RedisServer:
    """One redis-server process; ``kill`` it (SIGKILL) and ``start`` it again on the same port and data."""

    binary: str
    folder: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Start (or restart, on the same port and folder) the server; wait until it answers.

        A free port is only free when it was looked at: a server of a parallel worker can take it
        before this one binds. On the first start that server is refused (it serves another
        folder) and a new port is tried; a restart keeps its port (the tests reconnect to it)."""
        first = self.process is None and not (self.folder / "redis.log").exists()
        for _attempt in range(5):
            if self._launch():
                return self
            if not first:
                break
            self.port = free_port()
        pytest.fail(f"redis-server did not start: {(self.folder / 'redis.log').read_text()}")

    def _launch(self) -> bool:
        self.folder.mkdir(parents=True, exist_ok=True)
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder)]
        args += ["--save", "", "--appendonly", "yes", "--appendfsync", "always", "--protected-mode", "yes"]
        log = (self.folder / "redis.log").open("ab")
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()
        process = self.process
        wait_for(
            lambda: process.poll() is not None or _serves(self.port, self.folder),
            f"redis-server on {self.port}",
        )
        if process.poll() is None:
            return True
        self.process = None
        return False

    def kill(self) -> None:
        """SIGKILL, as a crashed or evicted server; waits until the port is closed."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=START_TIMEOUT_S)
        self.process = None

    def client(self) -> object:
        import redis

        return redis.Redis.from_url(self.url, socket_timeout=10)
