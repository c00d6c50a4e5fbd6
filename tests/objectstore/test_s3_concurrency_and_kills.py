"""Two machines pushing overlapping runs at once; kill -9 in the middle of a push and of a pull.

Real processes (the ``oracleproto`` console script), a real S3 server, and a proxy that holds one
request half-way so that the kill lands mid-transfer, not between steps. Each case then checks what
is left (no partial object, no index before its objects, nothing placed, only verified objects in
the cache) and that rerunning the same command finishes the job, moving only what was missing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oracleproto.objectstore.cache import hash_file
from oracleproto.objectstore.sealed import seal_for_push
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.primitives.killpoints import ENV_VAR
from oracleproto.verify import verify_run
from oracleproto.verify.attest import published_files
from tests.objectstore.conftest import (
    ORACLEPROTO,
    S3Server,
    SimRuns,
    StoreEnv,
    invoke,
    run_id_of,
    subprocess_env,
)
from tests.objectstore.proxy import FORWARD, HOLD, Proxy, Request

pytestmark = pytest.mark.slow


def _objects(run: Path) -> set[str]:
    return set(
        seal_for_push(run, dataset=None, include_dataset=True, progress=lambda _: None).index.objects()
    )


def _stored(s3: S3Server, store: StoreEnv) -> dict[str, list[str]]:
    """What the bucket holds under this test's prefix: object digests and run index names."""
    prefix = store.url.split("/", 3)[-1] + "/"
    client: Any = s3.client()
    keys = [
        o["Key"][len(prefix) :]
        for o in client.list_objects_v2(Bucket=s3.bucket, Prefix=prefix).get("Contents", [])
    ]
    return {
        "objects": sorted(k.rsplit("/", 1)[1] for k in keys if k.startswith("objects/")),
        "runs": sorted(k for k in keys if k.startswith("runs/")),
    }


def _start(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [ORACLEPROTO, *args],
        env=subprocess_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _uploaded(output: str) -> int:
    return int(output.split(" of ", maxsplit=1)[0].rsplit(" ", 1)[1])


def test_concurrent_pushes_of_overlapping_runs_from_two_processes(
    s3: S3Server, store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    first, second = _objects(sim_runs.sealed), _objects(sim_runs.collected)
    shared = first & second
    assert shared and first != second
    # One proxy per process, so the barrier knows who asked what. It counts the distinct objects
    # whose HEAD the store has answered for each process (a retried HEAD, e.g. on a dropped
    # keep-alive connection, adds nothing), and every PUT waits until both have their answers for
    # all of theirs: both then know the shared objects missing and send them, so the race on each
    # shared name really happens.
    asked: list[set[str]] = [set(), set()]
    everyone_asked = threading.Event()
    lock = threading.Lock()

    def answered_for(who: int) -> Callable[[str, str, int], None]:
        def answered(method: str, path: str, _status: int) -> None:
            if method == "HEAD" and "/objects/" in path:
                with lock:
                    asked[who].add(path.rsplit("/", 1)[1])
                    if asked[0] >= first and asked[1] >= second:
                        everyone_asked.set()

        return answered

    def barrier(request: Request) -> str:
        if request.method == "PUT" and "/objects/" in request.path:
            everyone_asked.wait(300)
        return FORWARD

    proxies = [Proxy(s3.port, rule=barrier, on_answered=answered_for(who)).start() for who in (0, 1)]
    try:
        procs = [
            _start(["store", "push", str(run), "--quiet"], store.with_(AWS_ENDPOINT_URL_S3=proxy.endpoint))
            for run, proxy in zip((sim_runs.sealed, sim_runs.collected), proxies, strict=True)
        ]
        outs = [p.communicate(timeout=600) for p in procs]
    finally:
        for proxy in proxies:
            proxy.stop()
    assert everyone_asked.is_set(), f"the processes asked about {asked}, not every object of theirs"
    for proc, (out, err) in zip(procs, outs, strict=True):
        assert proc.returncode == 0, out + err
    won: list[set[str]] = [set(), set()]
    for who, (proxy, wanted) in enumerate(zip(proxies, (first, second), strict=True)):
        puts = [
            (a[1].rsplit("/", 1)[1], a[2]) for a in proxy.answered if a[0] == "PUT" and "/objects/" in a[1]
        ]
        assert {sha for sha, _ in puts} == wanted  # each process sent every object of its run
        won[who] = {sha for sha, status in puts if status in (200, 201)}
    # The conditional PUT let exactly one writer win each shared name.
    assert won[0] | won[1] == first | second and not won[0] & won[1]
    assert sum(_uploaded(out) for out, _ in outs) == len(first | second)
    stored = _stored(s3, store)
    assert stored["objects"] == sorted(first | second) and len(stored["runs"]) == 2
    for digest_line, name in ((outs[0][0], "a"), (outs[1][0], "b")):
        digest = next(line.split()[1] for line in digest_line.splitlines() if line.startswith("index: "))
        done = invoke(["store", "pull", digest, str(tmp_path / name), "--quiet"], store.env)
        assert done.exit_code == 0, done.output
        assert verify_run(tmp_path / name / "run" / run_id_of(sim_runs.sealed)).ok


def _kill_when_held(proxy: Proxy, proc: subprocess.Popen[str]) -> None:
    if not proxy.held.wait(90):
        proc.kill()
        pytest.fail(f"no request was held: {proc.communicate()}")
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(30)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    proxy.release.set()


def test_kill_9_mid_upload_then_the_rerun_sends_only_the_rest(
    s3: S3Server, store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    run = sim_runs.sealed
    wanted = _objects(run)
    puts = [0]

    def hold_third_put(request: Request) -> str:
        if request.method == "PUT" and "/objects/" in request.path:
            puts[0] += 1
            if puts[0] == 3:
                return HOLD  # half its body is read, then the pusher is killed
        return FORWARD

    proxy = Proxy(s3.port, rule=hold_third_put).start()
    try:
        env = store.with_(AWS_ENDPOINT_URL_S3=proxy.endpoint, CASSETTE_STORE_JOBS="1")
        _kill_when_held(proxy, _start(["store", "push", str(run), "--quiet"], env))
    finally:
        proxy.stop()
    left = _stored(s3, store)
    assert left["runs"] == []  # no index before every object is there
    assert len(left["objects"]) == 2 and set(left["objects"]) <= wanted  # the half-sent one is not there
    resumed = invoke(["store", "push", str(run), "--quiet"], store.env)
    assert resumed.exit_code == 0, resumed.output
    assert f"{len(wanted) - 2} of {len(wanted)} object(s) uploaded" in resumed.output
    assert "2 already there" in resumed.output
    pulled = invoke(["store", "pull", run_id_of(run), str(tmp_path / "d"), "--quiet"], store.env)
    assert pulled.exit_code == 0, pulled.output
    assert verify_run(tmp_path / "d" / "run" / run_id_of(run)).ok


def _cache_is_verified(cache: Path) -> int:
    objects = [p for p in (cache / "objects").rglob("*") if p.is_file()]
    for path in objects:
        assert hash_file(path)[0] == path.name, path
    return len(objects)


def test_kill_9_mid_download_then_the_rerun_fetches_only_the_rest(
    s3: S3Server, store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    run = sim_runs.sealed
    wanted = _objects(run)
    assert invoke(["store", "push", str(run), "--quiet"], store.env).exit_code == 0
    gets = [0]

    def hold_third_get(request: Request) -> str:
        if request.method == "GET" and "/objects/" in request.path:
            gets[0] += 1
            if gets[0] == 3:
                return HOLD  # headers and half the body are sent, then the puller is killed
        return FORWARD

    dest = tmp_path / "dest"
    proxy = Proxy(s3.port, rule=hold_third_get).start()
    try:
        env = store.with_(AWS_ENDPOINT_URL_S3=proxy.endpoint, CASSETTE_STORE_JOBS="1")
        _kill_when_held(proxy, _start(["store", "pull", run_id_of(run), str(dest), "--quiet"], env))
    finally:
        proxy.stop()
    assert not dest.exists()
    assert _cache_is_verified(store.cache) == 2  # the half-received one never entered the cache
    assert len(list((store.cache / "tmp").iterdir())) == 1  # its temporary file, swept by the rerun
    resumed = invoke(["store", "pull", run_id_of(run), str(dest), "--quiet"], store.env)
    assert resumed.exit_code == 0, resumed.output
    assert (
        f"{len(wanted) - 2} object(s) fetched" in resumed.output
        and "2 from the local cache" in resumed.output
    )
    assert list((store.cache / "tmp").iterdir()) == []
    assert verify_run(dest / "run" / run_id_of(run)).ok


@pytest.mark.parametrize("point", ["store-put:2", "store-index", "store-get:2", "store-place"])
def test_kill_9_at_each_step_then_resume(
    point: str, s3: S3Server, store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    run = sim_runs.sealed
    wanted = _objects(run)
    dest = tmp_path / "dest"
    pushing = point in ("store-put:2", "store-index")
    if not pushing:
        assert invoke(["store", "push", str(run), "--quiet"], store.env).exit_code == 0
    args = (
        ["store", "push", str(run), "--quiet"]
        if pushing
        else ["store", "pull", run_id_of(run), str(dest), "--quiet"]
    )
    killed = subprocess.run(  # noqa: PLW1510 - the return code is the point
        [ORACLEPROTO, *args],
        env=subprocess_env(store.with_(**{ENV_VAR: point, "CASSETTE_STORE_JOBS": "1"})),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    if pushing:
        left = _stored(s3, store)
        assert left["runs"] == [] and len(left["objects"]) == (2 if point == "store-put:2" else len(wanted))
    else:
        assert not dest.exists()
        assert _cache_is_verified(store.cache) == (2 if point == "store-get:2" else len(wanted))
    resumed = invoke(args, store.env)
    assert resumed.exit_code == 0, resumed.output
    if pushing:
        assert invoke(["store", "pull", run_id_of(run), str(dest), "--quiet"], store.env).exit_code == 0
    assert not list(
        dest.parent.glob(f".{dest.name}.pull-*")
    )  # the killed pull's staging folder and lock are gone
    for rel in [*published_files(run), "attestation.json"]:
        pulled = dest / "run" / run_id_of(run) / rel
        assert sha256_hex(pulled.read_bytes()) == sha256_hex((run / rel).read_bytes()), rel
    assert verify_run(dest / "run" / run_id_of(run)).ok
