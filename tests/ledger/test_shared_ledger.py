"""Shards sharing one ledger (a real redis-server on 127.0.0.1) end to end, each shard its own process
recording against a simulator: two shards with one key and one ``--max-cost`` never spend past it
together; a ledger killed mid-run stops the shard resumably (exit 4) and the shard finishes once it
is back; no key reaches Redis; a ledger that cannot be reached, or a cap nothing prices, stops a
shard before anything is written."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from oracleproto.ledger import NANO, key_id
from oracleproto.ledger.redis_ledger import budget_keys
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer
from oracleproto.sim.server import SimConfig, SimHandler, Simulator
from oracleproto.transport.stats import cassette_stats
from tests.ledger.redis_server import RedisServer, free_port, wait_for
from tests.ledger.support import (
    LLM_KEY,
    TAVILY_KEY,
    USD_PER_SEARCH,
    env_file,
    finish,
    invoke,
    manifest,
    price_file,
    record_args,
    start,
)

RATES = "llm=200/s:20,search=200/s:20,detector=400/s:40"


@pytest.fixture
def sim() -> Iterator[Simulator]:
    with Simulator(SimConfig(seed=5)) as server:
        yield server


def experiment_id(env: Path, *extra: str) -> str:
    result = invoke(["run", "--env-file", env, "--print-experiment-id", *extra])
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def budget(server: RedisServer, experiment: str) -> dict[str, int]:
    client: Any = server.client()
    try:
        raw = client.hgetall(budget_keys(experiment)[0])
    finally:
        client.close()
    return {k.decode(): int(v) for k, v in raw.items()}


def recorded_usd(run: Path) -> float:
    """What the run's recorded calls cost: the reported cost of every chat call, the searches' credits."""
    stats = cassette_stats(run / "cassettes")
    chat = sum(ch.cost for name, ch in stats.channels.items() if name != "search")
    assert all(ch.costed == ch.entries for name, ch in stats.channels.items() if name != "search")
    search = stats.channels.get("search")
    return chat + (search.entries if search is not None else 0) * USD_PER_SEARCH


def only_run(runs: Path) -> Path:
    found = [p for p in runs.iterdir() if p.is_dir()]
    assert len(found) == 1, found
    return found[0]


def test_two_shards_with_one_key_and_one_cap_never_spend_past_it(
    tmp_path: Path, sim: Simulator, redis_server: RedisServer
) -> None:
    env = env_file(tmp_path, sim.base_url)
    prices = price_file(tmp_path)
    cap = 0.03
    shared = {"LEDGER_URL": redis_server.url, "LEDGER_RATES": RATES}
    processes = []
    for index in (0, 1):
        folder = tmp_path / f"shard{index}"
        folder.mkdir()
        args = record_args(folder, env, "--shard", f"{index}/2", "--prices", prices, "--max-cost", str(cap))
        processes.append((folder, start(args, shared, folder / "out")))
    runs = []
    for folder, process in processes:
        code, _, err = finish(process, folder / "out")
        assert code == 5, err
        assert (
            "error: spend cap: experiment exp1-" in err and f"more than --max-cost ${cap:.6f} allows" in err
        )
        assert "stopped and is resumable: raise --max-cost on every shard" in err
        runs.append(only_run(folder / "runs"))
    experiment = experiment_id(env)
    counted = budget(redis_server, experiment)
    recorded = sum(recorded_usd(run) for run in runs)
    print(f"cap {cap}, recorded {recorded:.6f}, ledger {counted}")  # the measured facts (-s shows them)
    assert counted["committed"] <= cap * NANO
    # Every recorded call was settled at what it cost; the rest is calls cut off by the stop.
    assert recorded * NANO <= counted["settled"] + 10 <= counted["committed"] + 10
    # The shards did spend, and the ledger stood near the cap when it refused: reservations are each
    # call's largest possible cost, so how much of it was settled depends on the calls' timing.
    assert recorded > 0 and counted["committed"] > cap * NANO / 2
    assert {manifest(run)["experiment"]["id"] for run in runs} == {experiment}  # type: ignore[index]
    # Both shards' calls went through one bucket per key; no key, nor a piece of one, is in Redis.
    client: Any = redis_server.client()
    try:
        keys = {key.decode() for key in client.scan_iter("*")}
        stored = "\n".join([*keys, *(str(client.hgetall(key)) for key in keys)])
    finally:
        client.close()
    assert {f"oracleproto:v1:bucket:{key_id(LLM_KEY)}", f"oracleproto:v1:bucket:{key_id(TAVILY_KEY)}"} <= keys
    for secret in (LLM_KEY, TAVILY_KEY):
        for start_at in range(len(secret) - 7):
            assert secret[start_at : start_at + 8] not in stored


class HeldSimulator:
    """The simulator, holding every POST after the first ``free`` until released: the shard is
    certainly mid-run, some calls settled and others waiting, when its ledger goes away."""

    def __init__(self, free: int) -> None:
        self._handler = SimHandler(SimConfig(seed=5))
        self._free = free
        self._lock = threading.Lock()
        self.posts = 0
        self.release = threading.Event()
        self.server = LoopbackServer(self, 0)

    def __call__(self, request: LoopbackRequest) -> LoopbackResponse:
        if request.method == "POST":
            with self._lock:
                self.posts += 1
                held = self.posts > self._free
            if held:
                self.release.wait(timeout=300)
        return self._handler(request)


def test_a_lost_ledger_stops_the_shard_resumably_and_it_finishes_when_back(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    sim = HeldSimulator(free=6)
    sim.server.start()
    try:
        _lost_and_back(tmp_path, sim, redis_server)
    finally:
        sim.release.set()
        sim.server.stop()


def _lost_and_back(tmp_path: Path, sim: HeldSimulator, redis_server: RedisServer) -> None:
    env = env_file(tmp_path, sim.server.base_url)
    prices = price_file(tmp_path)
    args = record_args(tmp_path, env, "--shard", "0/2", "--limit", "4", "--prices", prices, "--max-cost", "5")
    shared = {"LEDGER_URL": redis_server.url}
    experiment = experiment_id(env, "--limit", "4")
    process = start(args, shared, tmp_path / "out")
    wait_for(lambda: sim.posts > 6, "a call held by the simulator")
    wait_for(lambda: budget(redis_server, experiment).get("settled", 0) > 0, "the shard's first settled call")
    before = budget(redis_server, experiment)
    redis_server.kill()
    sim.release.set()  # the held calls are answered; the shard's next reservation finds no ledger
    code, _, err = finish(process, tmp_path / "out")
    assert code == 4, err
    run = only_run(tmp_path / "runs")
    assert f"error: ledger: redis://127.0.0.1:{redis_server.port}/0 (LEDGER_URL) did not answer (" in err
    assert (
        f"run {run.name} stopped and is resumable: bring the ledger back (or leave LEDGER_URL unset to run "
        f"without one), then rerun with --run-id {run.name} (finished samples are kept)"
    ) in err
    assert manifest(run)["finished_at"] is None

    redis_server.start()  # same port, same append-only file: every count is still there
    assert budget(redis_server, experiment)["settled"] >= before["settled"]
    resumed = invoke([*args, "--run-id", run.name], shared)
    assert resumed.exit_code == 0, resumed.output
    assert f"experiment {experiment}: $" in resumed.stderr and "spent by every shard" in resumed.stderr
    finished = manifest(run)
    assert finished["finished_at"] is not None
    assert finished["grid"]["real_models"] == ["sim/careful", "sim/hasty"]  # type: ignore[index]
    after = budget(redis_server, experiment)
    assert after["settled"] > before["settled"] and after["committed"] <= 5 * NANO


def test_a_ledger_that_cannot_be_reached_stops_a_shard_before_anything_is_written(tmp_path: Path) -> None:
    env = env_file(tmp_path, "http://127.0.0.1:9")
    port = free_port()
    result = invoke(
        record_args(tmp_path, env, "--shard", "0/2"), {"LEDGER_URL": f"redis://127.0.0.1:{port}/0"}
    )
    assert result.exit_code == 4, result.output
    assert (
        f"ledger: redis://127.0.0.1:{port}/0 (LEDGER_URL) did not answer (ConnectionError: " in result.stderr
    )
    assert "Traceback" not in result.output
    assert not (tmp_path / "runs").exists()


def test_a_shared_cap_needs_a_price_for_every_call(tmp_path: Path) -> None:
    env = env_file(tmp_path, "http://127.0.0.1:9")
    result = invoke(
        record_args(tmp_path, env, "--shard", "1/2", "--max-cost", "1"),
        {"LEDGER_URL": f"redis://127.0.0.1:{free_port()}/0"},
    )
    assert result.exit_code == 2, result.output
    assert (
        "--max-cost with a ledger reserves each call's most possible cost before sending it" in result.stderr
    )
    assert "nothing prices sim/greedy, sim/random, sim/detector, search (Tavily credits)" in result.stderr
    assert "or set LEDGER_RESERVE_USD" in result.stderr
    assert not (tmp_path / "runs").exists()
