"""Cassette store throughput: ``store push``/``pull`` vs the client library copying the same bytes.

Against a local S3-compatible server (moto's, started here on 127.0.0.1 in its own process) and a
``file://`` store, with the bundled demo run (its files and dataset, 38 objects). For each, the
median of ``REPEATS`` runs into fresh prefixes and caches of:

* ``push``: ``push_run`` as the command runs it — seal check (every file hashed against
  attestation.json), secret scan, HEAD per object, conditional PUT per missing object, the index;
  and its transfer phase alone (from the first HEAD to the index);
* ``pull``: ``pull_run`` into a new folder with a cold cache — GET into the cache with hashing,
  lay-out with hashing, the seal and Merkle-root check, the rename; and with a warm cache;
* the baseline: obstore alone, the same objects ``put`` / ``get`` (into files) on the same number
  of threads, no hashing, no checks.

Prints measured values and ratios against the baseline measured in the same run; no targets.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

REPEATS = 5
BUCKET = "bench"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _moto() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(endpoint, timeout=1).close()  # our own loopback server
            break
        except OSError:
            time.sleep(0.05)
    return proc, endpoint


def _median(fn: Callable[[int], float]) -> float:
    return statistics.median(fn(i) for i in range(REPEATS))


def _mbps(size: int, seconds: float) -> str:
    return f"{size / 1e6 / seconds:7.1f} MB/s"


def _bench(url: str, env: dict[str, str], work: Path) -> None:
    import obstore

    from oracleproto.objectstore import Backend, ObjectCache, parse_store_url, pull_run, push_run
    from oracleproto.objectstore.naming import object_key
    from oracleproto.objectstore.sealed import seal_for_push
    from oracleproto.objectstore.transfer import run_all
    from oracleproto.verify.demo import find_demo_run

    run = find_demo_run()
    sealed = seal_for_push(run, dataset=None, include_dataset=True, progress=lambda _: None)
    objects = sealed.index.objects()
    total = sum(objects.values())
    print(f"-- {url.split(':', maxsplit=1)[0]} store: demo run, {len(objects)} objects, {total / 1e6:.1f} MB")

    def backend(i: int, tag: str) -> Backend:
        return Backend(parse_store_url(f"{url}/{tag}-{i}"), env, create=True)

    transfer: list[float] = []

    def push(i: int) -> float:
        marks: dict[str, float] = {}

        def progress(stage: str) -> None:
            if stage.startswith("asking"):
                marks["transfer"] = time.perf_counter()

        start = time.perf_counter()
        push_run(backend(i, "push"), run, progress=progress)
        end = time.perf_counter()
        transfer.append(end - marks["transfer"])
        return end - start

    def raw_put(i: int) -> float:
        store = backend(i, "raw")._store
        start = time.perf_counter()
        run_all(
            sorted(objects),
            lambda sha: obstore.put(store, object_key(sha), sealed.sources[sha].read_bytes()),
            8,
        )
        return time.perf_counter() - start

    pulls = [0]

    def pull(i: int, warm: bool = False) -> float:
        cache = work / ("warm" if warm else f"cold-{i}")
        pulls[0] += 1
        dest = work / f"pulled-{pulls[0]}"
        start = time.perf_counter()
        pull_run(backend(i, "push"), run.name, dest, ObjectCache(cache))
        return time.perf_counter() - start

    def raw_get(i: int) -> float:
        store = backend(i, "raw")._store
        folder = work / f"raw-get-{i}"
        folder.mkdir()

        def get(sha: str) -> None:
            with (folder / sha).open("wb") as out:
                for chunk in obstore.get(store, object_key(sha)).stream(min_chunk_size=1 << 20):
                    out.write(chunk)

        start = time.perf_counter()
        run_all(sorted(objects), get, 8)
        return time.perf_counter() - start

    t_push, t_put = _median(push), _median(raw_put)
    t_transfer = statistics.median(transfer)
    pull(0, warm=True)  # fills the warm cache
    t_pull, t_get = _median(pull), _median(raw_get)
    t_warm = _median(lambda i: pull(i, warm=True))
    rows = [
        ("client library put (baseline)", t_put, 1.0),
        ("store push, whole (seal check + secret scan + transfer)", t_push, t_push / t_put),
        ("store push, transfer phase (HEAD + conditional PUT + index)", t_transfer, t_transfer / t_put),
        ("client library get into files (baseline)", t_get, 1.0),
        ("store pull, cold cache (fetch + verify + seal + root + place)", t_pull, t_pull / t_get),
        ("store pull, warm cache (0 fetched: re-hash + lay out + checks)", t_warm, t_warm / t_get),
    ]
    for name, seconds, ratio in rows:
        print(f"  {name:<66} {seconds:7.3f} s {_mbps(total, seconds)}  ratio {ratio:5.2f}")


def main() -> int:
    """Both stores; the S3 server lives only as long as this benchmark."""
    work = Path(tempfile.mkdtemp(prefix="oracleproto-bench-store-"))
    proc, endpoint = _moto()
    try:
        import boto3

        env = {
            "AWS_ACCESS_KEY_ID": "benchbenchbench1",
            "AWS_SECRET_ACCESS_KEY": "benchbenchbenchbenchbench",
            "AWS_ENDPOINT_URL_S3": endpoint,
            "AWS_REGION": "us-east-1",
        }
        boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            region_name="us-east-1",
        ).create_bucket(Bucket=BUCKET)
        load = os.getloadavg()[0]
        print(f"load average at start: {load:.2f} on {os.cpu_count()} CPUs; median of {REPEATS}")
        _bench(f"s3://{BUCKET}", env, work / "s3")
        _bench(f"file://{work / 'files'}", {}, work / "file")
    finally:
        proc.terminate()
        proc.wait(10)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
