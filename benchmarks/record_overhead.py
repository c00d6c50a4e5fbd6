"""Record overhead per request with realistic bodies (4–48 KB each way), the final write amortised.

A loopback server answers every request with a JSON body of the size the request asks for.
Plain httpx and the recording transport send the same requests, interleaved so drift hits
both alike; the recording session is then closed (the end-of-session fold that rewrites
the YAML cassettes) and that time is spread over its requests.

Requests carry no credentials by default (as against the simulator). ``measure(auth_key=…)``
sends a bearer key on both clients, as every request to a real provider does: the recorder
then also hunts the key and its fragments through each entry before it is written (the
secrets scrub), which ``python -m benchmarks.record_overhead`` reports on a second line.
``python -m benchmarks.record_overhead --profile`` runs the keyless measurement once under cProfile
and prints where the recording side's time goes (the harness's own functions, by internal time).
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import pstats
import random
import socket
import socketserver
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from oracleproto.clock import SystemClock
from oracleproto.context import CallContext, call_context
from oracleproto.transport.recorder import RecordReplay

N_REQUESTS = 400
MIN_BODY, MAX_BODY = 4 * 1024, 48 * 1024
#: A fake key as long as an OpenAI project key (``sk-proj-`` + 156 characters), never a real one.
FAKE_KEY = "sk-test-planted-fake-" + "".join(
    random.Random(7).choices("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789", k=143)
)
_WORDS = ("the", "forecast", "of", "resolved", "events", "under", "a", "time", "masked", "search", "leak")


def _text(rng: random.Random, size: int) -> str:
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:size]


#: The server's replies are cut from this text, so it answers in microseconds: its work is the
#: same for both clients, and the less of it there is, the less noise it adds to their difference.
_REPLY_SOURCE = _text(random.Random(2), 4 * MAX_BODY)


class _Handler(socketserver.StreamRequestHandler):
    """Keep-alive HTTP/1.1, one write per response (no Nagle delay); body size from ``?n=``.

    Each connection draws the same sequence of replies, so both clients get the same bodies.
    """

    def handle(self) -> None:
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        rng = random.Random(0)
        while True:
            line = self.rfile.readline()
            if not line:
                return
            size = int(line.split(b"n=", 1)[1].split(b" ", 1)[0]) if b"n=" in line else MIN_BODY
            length = 0
            while (header := self.rfile.readline()) not in (b"\r\n", b""):
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            self.rfile.read(length)
            start = rng.randrange(len(_REPLY_SOURCE) - MAX_BODY)
            content = _REPLY_SOURCE[start : start + size]
            body = json.dumps(
                {
                    "choices": [{"message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1},
                }
            ).encode()
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            self.wfile.write(head.encode() + body)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


async def _send(client: httpx.AsyncClient, i: int, size: int, prompt: str, tag: str) -> float:
    with call_context(CallContext("m", f"q{i}", 0)):
        start = time.perf_counter()
        await client.post(
            f"/v1/chat/completions?n={size}",
            json={"model": "m", "messages": [{"role": "user", "content": f"{tag}{i} {prompt}"}]},
        )
        return time.perf_counter() - start


async def _measure(root: Path, auth_key: str | None = None) -> tuple[float, float, float]:
    server = _Server(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    rng = random.Random(1)
    sizes = [(rng.randint(MIN_BODY, MAX_BODY), rng.randint(MIN_BODY, MAX_BODY)) for _ in range(N_REQUESTS)]
    prompts = [_text(rng, req) for req, _ in sizes]
    headers = {"Authorization": f"Bearer {auth_key}"} if auth_key else {}
    try:
        rr = RecordReplay(root / "ov", clock=SystemClock(), mode="record")
        async with (
            httpx.AsyncClient(base_url=base_url, headers=headers) as plain,
            httpx.AsyncClient(transport=rr.transport("llm"), base_url=base_url, headers=headers) as recording,
        ):
            # Warm both clients: connection pools, and the recorder's own transport (made on its
            # first request, ≈ 25 ms for the TLS context) — once per session, not per request. The
            # warm entries are folded too; the fold is still spread over the timed requests only.
            for i in range(30):
                await _send(plain, i, MIN_BODY, "warm", "w")
                await _send(recording, i, MIN_BODY, "warm", "w")
            base: list[float] = []
            rec: list[float] = []
            for i, ((_, resp), prompt) in enumerate(zip(sizes, prompts, strict=True)):
                base.append(await _send(plain, i, resp, prompt, "p"))
                rec.append(await _send(recording, i, resp, prompt, "r"))
        start = time.perf_counter()
        await rr.aclose()  # the end-of-session fold: every YAML cassette file written
        fold = time.perf_counter() - start
    finally:
        server.shutdown()
        server.server_close()
    return statistics.mean(base), statistics.mean(rec), fold


def measure(auth_key: str | None = None) -> tuple[float, float, float]:
    """(plain ms/request, recording ms/request, overhead ms/request with the fold amortised)."""
    with tempfile.TemporaryDirectory() as tmp:
        base, rec, fold = asyncio.run(_measure(Path(tmp), auth_key))
    per_fold = fold / N_REQUESTS
    return base * 1000, rec * 1000, (rec - base + per_fold) * 1000


def measure_median(repeats: int = 3) -> tuple[tuple[float, float, float], list[float]]:
    """:func:`measure` ``repeats`` times: the run with the median overhead, and every run's overhead.

    Each run's overhead is against the plain baseline timed alongside it; the median keeps one run
    disturbed by the rest of the machine (another process, the VM's host) from deciding the row.
    """
    runs = sorted((measure() for _ in range(repeats)), key=lambda run: run[2])
    return runs[len(runs) // 2], [run[2] for run in runs]


def profile(limit: int = 30) -> None:
    """One keyless measurement under cProfile: the harness's functions by internal time."""
    profiler = cProfile.Profile()
    profiler.enable()
    base, rec, overhead = measure()
    profiler.disable()
    print(f"(profiled) plain {base:.3f} ms, recording {rec:.3f} ms, overhead {overhead:.3f} ms/request")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats("oracleproto", limit)
    stats.sort_stats("cumulative").print_stats("oracleproto", limit)


def main(argv: Sequence[str] = ()) -> None:
    """Print the overhead, without credentials and with a bearer key (``--profile``: where it goes)."""
    if "--profile" in argv:
        profile()
        return
    base, rec, overhead = measure()
    print(f"plain {base:.3f} ms, recording {rec:.3f} ms, overhead with fold {overhead:.3f} ms/request")
    base, rec, overhead = measure(FAKE_KEY)
    print(
        f"with a {len(FAKE_KEY)}-char bearer key: plain {base:.3f} ms, recording {rec:.3f} ms, "
        f"overhead with fold {overhead:.3f} ms/request"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
