"""A damaged store, refused credentials and a throttled server, against the real S3 server."""

from __future__ import annotations

import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from oracleproto.objectstore.naming import OBJECTS, RUNS
from tests.objectstore.conftest import (
    S3Server,
    SimRuns,
    StoreEnv,
    invoke,
    run_id_of,
    secret_fragments,
)
from tests.objectstore.proxy import FORWARD, SLOW_DOWN, Proxy, Reply, Request


def _push(store: StoreEnv, run: Path) -> str:
    done = invoke(["store", "push", str(run), "--quiet"], store.env)
    assert done.exit_code == 0, done.output
    return next(line.split()[1] for line in done.output.splitlines() if line.startswith("index: "))


def _key(store: StoreEnv, s3: S3Server, rel: str) -> str:
    prefix = store.url.split("/", 3)[-1]
    return f"{prefix}/{rel}"


def _object_of(run: Path, rel: str) -> str:
    from oracleproto.primitives.hashing import sha256_hex

    sha = sha256_hex((run / rel).read_bytes())
    return f"{OBJECTS}/{sha[:2]}/{sha}"


def _nothing_placed(dest: Path) -> None:
    assert not dest.exists()
    assert not list(dest.parent.glob(f".{dest.name}.pull-*"))


@pytest.mark.parametrize("damage", ["flipped", "truncated"])
def test_a_damaged_object_is_refused_by_name_and_nothing_is_placed(
    damage: str, s3: S3Server, store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    run = sim_runs.sealed
    _push(store, run)
    rel = next(p.relative_to(run).as_posix() for p in (run / "db").glob("*.db"))
    good = (run / rel).read_bytes()
    bad = good[:100] + bytes([good[100] ^ 1]) + good[101:] if damage == "flipped" else good[: len(good) // 2]
    client: Any = s3.client()
    client.put_object(Bucket=s3.bucket, Key=_key(store, s3, _object_of(run, rel)), Body=bad)
    dest = tmp_path / "dest"
    pulled = invoke(["store", "pull", run_id_of(run), str(dest)], store.env)
    assert pulled.exit_code == 1, pulled.output
    assert _object_of(run, rel) in pulled.output and f"run/{run_id_of(run)}/{rel}" in pulled.output
    assert ("truncated" if damage == "truncated" else "its sha256 is not its name") in pulled.output
    assert "nothing was written into place" in pulled.output and "Traceback" not in pulled.output
    _nothing_placed(dest)
    cached = store.cache / _object_of(run, rel)
    assert not cached.exists()  # only verified bytes ever enter the cache
    assert not list((store.cache / "tmp").iterdir())
    # --from-store refuses it the same way.
    verified = invoke(["verify", run_id_of(run), "--from-store", store.url, "--quiet"], store.env)
    assert verified.exit_code == 1 and _object_of(run, rel) in verified.output


def test_a_tampered_index_is_refused(
    s3: S3Server, store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    run = sim_runs.sealed
    digest = _push(store, run)
    key = _key(store, s3, f"{RUNS}/{run_id_of(run)}/{digest}.json")
    client: Any = s3.client()
    text = client.get_object(Bucket=s3.bucket, Key=key)["Body"].read()
    client.put_object(Bucket=s3.bucket, Key=key, Body=text.replace(b'"size": ', b'"size": 1', 1))
    pulled = invoke(["store", "pull", run_id_of(run), str(tmp_path / "d")], store.env)
    assert pulled.exit_code == 1, pulled.output
    assert "its bytes hash to" in pulled.output and digest in pulled.output and "tampered" in pulled.output
    _nothing_placed(tmp_path / "d")
    listed = invoke(["store", "ls"], store.env)
    assert listed.exit_code == 0 and "DAMAGED" in listed.output


def test_read_only_credentials_cannot_push_and_are_never_shown(
    s3: S3Server, store: StoreEnv, sim_runs: SimRuns
) -> None:
    reviewer = store.with_(**s3.env(who="reviewer"))
    done = invoke(["store", "push", str(sim_runs.sealed), "--quiet"], reviewer)
    assert done.exit_code == 3, done.output
    assert "HTTP 403 AccessDenied" in done.output and "lack s3:PutObject" in done.output
    assert "read-only credentials can `store pull`" in done.output
    for fragment in secret_fragments(s3.reviewer["id"], s3.reviewer["secret"]):
        assert fragment not in done.output


def test_an_unknown_key_is_refused_without_echoing_it(s3: S3Server, store: StoreEnv) -> None:
    # Put together from parts, so that no line of the repository holds a key-shaped value whole.
    key_id, secret = "AKIA" + "ZZZZ7EXAMPLE1234", "k" * 20 + "SECRETsecret0123456789"
    done = invoke(["store", "ls"], store.with_(AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret))
    assert done.exit_code == 3, done.output
    assert "InvalidAccessKeyId" in done.output
    for fragment in secret_fragments(key_id, secret):
        assert fragment not in done.output


def test_anonymous_requests_say_credentials_are_missing(s3: S3Server, store: StoreEnv) -> None:
    # moto answers an unsigned request with a 500; S3 answers 403 AccessDenied, which the proxy plays.
    denied = b"<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"

    def s3_like(request: Request) -> Reply | str:
        return FORWARD if "Authorization" in request.headers else Reply(403, denied)

    proxy = Proxy(s3.port, rule=s3_like).start()
    try:
        env = {k: v for k, v in store.env.items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
        done = invoke(["store", "ls"], {**env, "AWS_ENDPOINT_URL_S3": proxy.endpoint})
    finally:
        proxy.stop()
    assert done.exit_code == 3, done.output
    assert "no credentials in the environment, so the request was anonymous" in done.output
    assert proxy.seen and all("Authorization" not in r.headers for r in proxy.seen)


def test_credentials_a_server_echoes_are_scrubbed(s3: S3Server, store: StoreEnv) -> None:
    token = "FwoGZXIvYXdzEJr//////////wEaDOGhS3ssi0nT0k3nFAKEpartOFaSESSIONtoken"

    def echo(request: Request) -> Reply:
        said = " ".join(f"{k}={v}" for k, v in request.headers.items())
        return Reply(403, f"<Error><Code>AccessDenied</Code><Message>{said}</Message></Error>".encode())

    proxy = Proxy(s3.port, rule=echo).start()
    try:
        env = store.with_(AWS_ENDPOINT_URL_S3=proxy.endpoint, AWS_SESSION_TOKEN=token)
        done = invoke(["store", "ls"], env)
    finally:
        proxy.stop()
    assert done.exit_code == 3, done.output
    assert "AccessDenied" in done.output and "[REDACTED]" in done.output
    for fragment in secret_fragments(s3.writer["id"], s3.writer["secret"], token):
        assert fragment not in done.output


def test_a_throttled_server_is_retried_until_the_push_and_pull_succeed(
    s3: S3Server, store: StoreEnv, sim_runs: SimRuns, tmp_path: Path
) -> None:
    attempts: Counter[tuple[str, str]] = Counter()
    lock = threading.Lock()

    def slow_down(request: Request) -> Reply | str:
        # Every request is refused twice, then let through. (Refusing 2 of every 3 requests in
        # arrival order could refuse one job's request eleven times in a row, the other job taking
        # every third slot, and so fail the push under load.)
        with lock:
            attempts[(request.method, request.path)] += 1
            again = attempts[(request.method, request.path)]
        return Reply(503, SLOW_DOWN) if again <= 2 else FORWARD

    proxy = Proxy(s3.port, rule=slow_down).start()
    try:
        env = store.with_(AWS_ENDPOINT_URL_S3=proxy.endpoint, CASSETTE_STORE_JOBS="2")
        pushed = invoke(["store", "push", str(sim_runs.sealed), "--quiet"], env)
        assert pushed.exit_code == 0, pushed.output
        pulled = invoke(["store", "pull", run_id_of(sim_runs.sealed), str(tmp_path / "d"), "--quiet"], env)
        assert pulled.exit_code == 0, pulled.output
    finally:
        proxy.stop()
    assert attempts and min(attempts.values()) >= 3  # each retried past its two refusals
    assert len(attempts) >= 5  # the run's objects' PUTs and GETs, and the listings
    assert (tmp_path / "d" / "run" / run_id_of(sim_runs.sealed) / "attestation.json").is_file()


def test_a_server_that_keeps_throttling_stops_with_a_resumable_message(
    s3: S3Server, store: StoreEnv, sim_runs: SimRuns
) -> None:
    proxy = Proxy(s3.port, rule=lambda _: Reply(503, SLOW_DOWN)).start()
    try:
        env = store.with_(AWS_ENDPOINT_URL_S3=proxy.endpoint, CASSETTE_STORE_RETRIES="2")
        done = invoke(["store", "push", str(sim_runs.sealed), "--quiet"], env)
    finally:
        proxy.stop()
    assert done.exit_code == 4, done.output
    assert "HTTP 503" in done.output and "the store is throttling requests" in done.output
    assert "failed after 2 retries" in done.output and "run the same command again" in done.output
    assert len(proxy.seen) >= 3  # the first request and its two retries


def test_an_unreachable_endpoint_stops_with_a_resumable_message(store: StoreEnv, closed_port: int) -> None:
    port = closed_port
    env = store.with_(AWS_ENDPOINT_URL_S3=f"http://127.0.0.1:{port}", CASSETTE_STORE_RETRIES="1")
    done = invoke(["store", "ls"], env)
    assert done.exit_code == 4, done.output
    assert f"cannot reach http://127.0.0.1:{port}" in done.output and "it resumes" in done.output
