"""Fixtures of the ledger tests: a real redis-server per test (they kill it), started on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.ledger.redis_server import RedisServer, redis_binary


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(redis_binary(), tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.kill()
