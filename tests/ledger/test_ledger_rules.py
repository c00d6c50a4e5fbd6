"""The ledger's rules, the same for the in-process ledger and for Redis (a real server on 127.0.0.1):
budgets that never commit past their cap however many clients reserve at once, settlements that
replace reservations, token buckets that refill at their rate, and a server that cannot be reached
named as such (the URL's password never shown)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from oracleproto.ledger import Budget, Ledger, LedgerUnavailableError, MemoryLedger
from oracleproto.ledger.redis_ledger import RedisLedger, bucket_key, budget_keys, ping
from oracleproto.primitives.clock import FakeClock
from tests.ledger.redis_server import RedisServer, free_port, redis_binary

Factory = Callable[[], Ledger]


@pytest.fixture(params=["memory", "redis"])
async def ledgers(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Factory]:
    """Clients of one ledger: the in-process one, or a Redis server each client connects to."""
    if request.param == "memory":
        shared = MemoryLedger(FakeClock())
        yield lambda: shared
        return
    server = RedisServer(redis_binary(), tmp_path / "redis").start()
    opened: list[RedisLedger] = []

    def connect() -> Ledger:
        opened.append(RedisLedger(server.url))
        return opened[-1]

    try:
        yield connect
    finally:
        for ledger in opened:
            await ledger.aclose()
        server.kill()


async def test_reservations_stop_at_the_cap_and_settle_to_the_real_cost(ledgers: Factory) -> None:
    ledger = ledgers()
    assert (await ledger.reserve("exp", "a", 600, 1000)).granted
    refused = await ledger.reserve("exp", "b", 500, 1000)
    assert not refused.granted and refused.committed_nano == 600
    await ledger.settle("exp", "a", 100)  # cost far below its bound: the rest comes back
    assert await ledger.budget("exp") == Budget(committed_nano=100, settled_nano=100)
    granted = await ledger.reserve("exp", "b", 500, 1000)
    assert granted.granted and granted.committed_nano == 600
    assert (await ledger.reserve("exp", "c", 400, 1000)).granted  # exactly the cap: allowed
    assert not (await ledger.reserve("exp", "d", 1, 1000)).granted
    # A settlement the ledger does not know (lost with a restarted server) adds its cost.
    await ledger.settle("exp", "unknown", 7)
    assert await ledger.budget("exp") == Budget(committed_nano=1007, settled_nano=107)
    assert (await ledger.reserve("exp", "e", 10**9, None)).granted  # no cap: counted, never refused
    assert await ledger.budget("other") == Budget()


async def test_concurrent_clients_never_commit_past_the_cap(ledgers: Factory) -> None:
    clients = [ledgers() for _ in range(4)]
    attempts = [clients[i % 4].reserve("exp", f"r{i}", 3, 100) for i in range(120)]
    grants = await asyncio.gather(*attempts)
    assert sum(g.granted for g in grants) == 33  # 33 x 3 = 99 <= 100 < 102
    assert (await clients[0].budget("exp")).committed_nano == 99


async def test_a_bucket_gives_its_burst_then_one_token_per_interval(ledgers: Factory) -> None:
    ledger = ledgers()
    taken = [await ledger.take("k", 0.5, 3) for _ in range(3)]
    assert taken == [0.0, 0.0, 0.0]
    wait = await ledger.take("k", 0.5, 3)
    assert 1.0 < wait <= 2.0  # one token every 2 s, part of one already back
    assert await ledger.take("other-key", 0.5, 3) == 0.0


def test_redis_keys_are_named_by_bucket_and_experiment() -> None:
    assert bucket_key("ab12") == "oracleproto:v1:bucket:ab12"
    assert budget_keys("exp1-x") == ["oracleproto:v1:budget:{exp1-x}", "oracleproto:v1:budget:{exp1-x}:open"]


async def test_an_unreachable_server_is_named_without_its_password() -> None:
    url = f"redis://:hunter2-ledger-password@127.0.0.1:{free_port()}/0"
    ledger = RedisLedger(url, timeout_s=2, retries=0)
    with pytest.raises(LedgerUnavailableError) as caught:
        await ledger.reserve("exp", "a", 1, None)
    await ledger.aclose()
    message = str(caught.value)
    assert message.startswith("ledger: redis://[REDACTED]@127.0.0.1:")
    assert "(LEDGER_URL) did not answer (ConnectionError: " in message
    assert "hunter2" not in message


def test_the_check_before_a_run_names_an_unreachable_server() -> None:
    with pytest.raises(LedgerUnavailableError, match=r"127\.0\.0\.1:\d+/0 \(LEDGER_URL\) did not answer"):
        ping(f"redis://127.0.0.1:{free_port()}/0", timeout_s=2)
