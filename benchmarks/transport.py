"""Record/replay overhead versus plain httpx to the same loopback server, and replay at scale."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import socketserver
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx
import yaml

from benchmarks.loader import child_cpu
from benchmarks.targets import LOADER_TARGET
from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import SystemClock
from oracleproto.primitives.fileio import atomic_write
from oracleproto.transport.entry import Entry
from oracleproto.transport.fileio import dump_entries
from oracleproto.transport.keys import canonical_request, entry_key
from oracleproto.transport.recorder import RecordReplay
from oracleproto.transport.store import rebuild_index

N_REQUESTS = 300
N_ENTRIES = int(os.environ.get("BENCH_TRANSPORT_ENTRIES", "50000"))
BODY = b'{"choices":[{"message":{"role":"assistant","content":"ok"}}],"usage":{"prompt_tokens":1}}'


class _OneWriteHandler(socketserver.StreamRequestHandler):
    """Keep-alive HTTP/1.1 that sends each response in one write.

    ``http.server`` writes headers and body separately, so Nagle plus delayed ACK add
    ~40 ms per request and drown the overhead being measured.
    """

    def handle(self) -> None:
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        while True:
            line = self.rfile.readline()
            if not line:
                return
            length = 0
            while (header := self.rfile.readline()) not in (b"\r\n", b""):
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            self.rfile.read(length)
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(BODY)}\r\n\r\n"
            self.wfile.write(head.encode() + BODY)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


async def _one(client: httpx.AsyncClient, i: int, tag: str) -> float:
    with call_context(CallContext("m", f"q{i}", 0)):
        start = time.perf_counter()
        await client.post(
            "/v1/chat/completions",
            json={"model": "m", "messages": [{"role": "user", "content": f"{tag}{i}"}]},
        )
        return time.perf_counter() - start


async def _overhead(root: Path) -> None:
    server = _Server(("127.0.0.1", 0), _OneWriteHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        rr = RecordReplay(root / "ov", clock=SystemClock(), mode="record")
        async with (
            httpx.AsyncClient(base_url=base_url) as plain,
            httpx.AsyncClient(transport=rr.transport("llm"), base_url=base_url) as recording,
        ):
            for i in range(50):  # warm both connection pools
                await _one(plain, i, "warm")
            base, rec = [], []
            for i in range(N_REQUESTS):  # interleaved so drift hits both alike
                base.append(await _one(plain, i, "x"))
                rec.append(await _one(recording, i, "x"))
        await rr.aclose()
        rr = RecordReplay(root / "ov", clock=SystemClock(), mode="replay")
        async with httpx.AsyncClient(transport=rr.transport("llm"), base_url=base_url) as replaying:
            rep = [await _one(replaying, i, "x") for i in range(N_REQUESTS)]
        await rr.aclose()
    finally:
        server.shutdown()
        server.server_close()
    b, r, p = (statistics.median(t) * 1000 for t in (base, rec, rep))
    print(f"plain httpx to loopback: median {b:.3f} ms/request")
    print(f"record: median {r:.3f} ms/request; overhead {r - b:.3f} ms (target <= 1 ms); ratio {r / b:.2f}x")
    print(f"replay: median {p:.3f} ms/request; ratio {p / b:.2f}x of plain httpx")


def synthetic_store(root: Path, n: int = N_ENTRIES) -> list[tuple[dict[str, object], str]]:
    requests = []
    entries = []
    for i in range(n):
        body = {"query": f"query number {i}", "max_results": 5}
        proj = canonical_request(
            "search", "POST", "https://api.tavily.com/search", str(body).replace("'", '"').encode()
        )
        key = entry_key(proj, None, None)
        requests.append((body, key))
        entries.append(
            Entry(
                key=key,
                channel="search",
                request_meta={k: v for k, v in proj.items() if k != "body"},
                request_body=json.dumps(
                    proj["body"], sort_keys=True, separators=(",", ":"), ensure_ascii=False
                ),
                context=None,
                occurrence=None,
                method="POST",
                uri="https://api.tavily.com/search",
                request_headers={},
                status=200,
                reason="OK",
                response_headers={"content-type": ["application/json"]},
                body=b'{"results":[{"title":"t","url":"https://e.org","content":"c"}]}',
                exception=None,
                latency_ms=100,
                recorded_at="2026-01-01T00:00:00.000000+00:00",
            )
        )
    atomic_write(root / "search.yaml", dump_entries(entries))
    return requests


def _untrusted_loader(path: Path) -> None:
    """The cassette loader (no anchors/aliases, depth and entry caps) against plain libyaml CSafeLoader."""
    s, p = child_cpu(path)
    print(
        f"cassette loader (untrusted input) {s:.2f} s CPU vs plain CSafeLoader {p:.2f} s CPU "
        f"for {path.stat().st_size / 1e6:.1f} MB: ratio {s / p:.2f}x (target <= {LOADER_TARGET}x)"
    )


async def _scale(root: Path) -> None:
    cdir = root / "scale"
    requests = synthetic_store(cdir)
    data = (cdir / "search.yaml").read_bytes()
    print(f"cassette bytes per entry: {len(data) / N_ENTRIES:.0f}")
    start = time.perf_counter()
    yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    parse_s = time.perf_counter() - start
    _untrusted_loader(cdir / "search.yaml")

    start = time.perf_counter()
    rr = RecordReplay(cdir, clock=SystemClock(), mode="replay")
    load_s = time.perf_counter() - start
    transport = rr.transport("search")
    start = time.perf_counter()
    for body, _ in requests:
        req = httpx.Request("POST", "https://api.tavily.com/search", json=body)
        await transport.handle_async_request(req)
    lookup_s = time.perf_counter() - start
    total = load_s + lookup_s
    print(f"read+parse {N_ENTRIES} entries: {parse_s:.2f} s")
    print(
        f"replay {N_ENTRIES} entries (load {load_s:.2f} s + {N_ENTRIES} requests {lookup_s:.2f} s): "
        f"{total:.2f} s; ratio {total / parse_s:.2f}x (target <= 2x)"
    )
    print(f"replay lookups/s (through the httpx transport): {N_ENTRIES / lookup_s:,.0f}")
    await rr.aclose()

    cache = root / "scale-cache"
    start = time.perf_counter()
    rebuild_index(cdir, cache)
    print(f"cache rebuild (one-off, from YAML): {time.perf_counter() - start:.2f} s")
    start = time.perf_counter()
    rr = RecordReplay(cdir, clock=SystemClock(), mode="replay", cache_dir=cache)
    transport = rr.transport("search")
    for body, _ in requests:
        await transport.handle_async_request(
            httpx.Request("POST", "https://api.tavily.com/search", json=body)
        )
    indexed_s = time.perf_counter() - start
    await rr.aclose()
    print(
        f"replay {N_ENTRIES} entries from a fresh cache/ index: {indexed_s:.2f} s; "
        f"ratio {indexed_s / parse_s:.2f}x of read+parse; {N_ENTRIES / indexed_s:,.0f} lookups/s"
    )


def main() -> None:
    """Print overhead and scale ratios."""
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(_overhead(Path(tmp)))
        asyncio.run(_scale(Path(tmp)))
