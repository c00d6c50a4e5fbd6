"""Record overhead per request with realistic keys and bodies (4–48 KB each way), the fold amortised.

A loopback server answers every request with a JSON body of the size the request asks for, shaped
as the real API's reply: a chat completion (id, usage blocks, fingerprint) or a Tavily search
(results with URLs, titles and page text).
Plain httpx and the recording transport send the same requests, interleaved so drift hits
both alike: every other request is a chat completion carrying a 164-character ``sk-proj-`` bearer
key, the others Tavily searches carrying a ``tvly-`` key as bearer and in the JSON body (as
tavily-python does), so the recorder hunts both keys — whole, base64, URL-encoded and every echoed
fragment — through every entry it writes (the secret scrub). The recording session is then closed
(the end-of-session fold that rewrites the YAML cassettes) and that time is spread over its requests.

Both wall time and the CPU time of the client's thread are taken per request (the loopback server
runs in another thread, so its work is in neither); the target holds on CPU.
``python -m benchmarks.record_overhead --profile`` runs one keyed measurement under cProfile.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import pstats
import random
import resource
import socket
import socketserver
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx

from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import SystemClock
from oracleproto.transport.recorder import RecordReplay

N_REQUESTS = 400
MIN_BODY, MAX_BODY = 4 * 1024, 48 * 1024
#: A fake key shaped like an OpenAI project key: ``sk-proj-`` + 156 characters (164 in all), never a real one.
FAKE_KEY = "sk-proj-" + "".join(
    random.Random(7).choices("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", k=156)
)
#: A fake Tavily key (``tvly-dev-`` + 32 characters), sent as tavily-python does: bearer and body.
FAKE_TAVILY_KEY = "tvly-dev-" + "".join(
    random.Random(8).choices("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", k=32)
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


_ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _token(rng: random.Random, n: int, chars: str = _ID_CHARS) -> str:
    return "".join(rng.choices(chars, k=n))


def _chat_reply(rng: random.Random, size: int) -> dict[str, object]:
    """A chat completion shaped as OpenAI's: its id, usage blocks and fingerprint are the short runs
    of key characters real replies are full of (the secret scrub's run scan looks into each)."""
    start = rng.randrange(len(_REPLY_SOURCE) - MAX_BODY)
    tokens = size // 4
    return {
        "id": f"chatcmpl-{_token(rng, 29)}",
        "object": "chat.completion",
        "created": 1_767_225_600 + rng.randrange(10**6),
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": _REPLY_SOURCE[start : start + size],
                    "refusal": None,
                },
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": tokens,
            "completion_tokens": tokens // 3,
            "total_tokens": tokens + tokens // 3,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
        "service_tier": "default",
        "system_fingerprint": f"fp_{_token(rng, 10, '0123456789abcdef')}",
    }


def _search_reply(rng: random.Random, size: int) -> dict[str, object]:
    """A Tavily search reply: results with URLs, titles and page text, about ``size`` bytes in all."""
    results: list[dict[str, object]] = []
    left = size
    while left > 0:
        start = rng.randrange(len(_REPLY_SOURCE) - MAX_BODY)
        content = _REPLY_SOURCE[start : start + min(left, 2000)]
        slug = "-".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 9)))
        results.append(
            {
                "url": f"https://www.{rng.choice(_WORDS)}-news.example/world/2026/01/{slug}-{_token(rng, 8)}",
                "title": " ".join(rng.choice(_WORDS) for _ in range(8)).title(),
                "content": content,
                "score": round(rng.random(), 8),
                "raw_content": None,
            }
        )
        left -= len(content) + 200
    return {
        "query": "q",
        "follow_up_questions": None,
        "answer": None,
        "images": [],
        "results": results,
        "response_time": round(rng.uniform(0.5, 3.0), 2),
        "request_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
    }


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
            reply = _search_reply if b"/search" in line else _chat_reply
            body = json.dumps(reply(rng, size)).encode()
            head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            self.wfile.write(head.encode() + body)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@dataclass(frozen=True)
class Overhead:
    """One measurement: per-request means (ms) of both clients, wall and client-thread CPU, fold amortised."""

    base_wall_ms: float
    rec_wall_ms: float
    base_cpu_ms: float
    rec_cpu_ms: float
    fold_wall_ms: float
    fold_cpu_ms: float

    @property
    def overhead_wall_ms(self) -> float:
        """Recording minus plain httpx, wall clock, the fold spread over the requests."""
        return self.rec_wall_ms - self.base_wall_ms + self.fold_wall_ms

    @property
    def overhead_cpu_ms(self) -> float:
        """Recording minus plain httpx, client-thread CPU, the fold's CPU spread over the requests."""
        return self.rec_cpu_ms - self.base_cpu_ms + self.fold_cpu_ms


async def _send(
    client: httpx.AsyncClient, i: int, size: int, prompt: str, tag: str, *, keyed: bool
) -> tuple[float, float]:
    """One request (odd ``i``: a Tavily search carrying its key in the body when ``keyed``);
    (wall, CPU of this thread) seconds."""
    with call_context(CallContext("m", f"q{i}", 0)):
        start, cpu = time.perf_counter(), time.thread_time()
        if i % 2:
            body: dict[str, object] = {"query": f"{tag}{i} {prompt}", "max_results": 5}
            if keyed:
                body["api_key"] = FAKE_TAVILY_KEY
            await client.post(f"/search?n={size}", json=body)
        else:
            await client.post(
                f"/v1/chat/completions?n={size}",
                json={"model": "m", "messages": [{"role": "user", "content": f"{tag}{i} {prompt}"}]},
            )
        return time.perf_counter() - start, time.thread_time() - cpu


def _headers(i: int, keyed: bool) -> dict[str, str]:
    if not keyed:
        return {}
    return {"Authorization": f"Bearer {FAKE_TAVILY_KEY if i % 2 else FAKE_KEY}"}


async def _measure(root: Path, keyed: bool = True) -> Overhead:
    server = _Server(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}"
    rng = random.Random(1)
    sizes = [(rng.randint(MIN_BODY, MAX_BODY), rng.randint(MIN_BODY, MAX_BODY)) for _ in range(N_REQUESTS)]
    prompts = [_text(rng, req) for req, _ in sizes]
    try:
        rr = RecordReplay(root / "ov", clock=SystemClock(), mode="record")
        async with (
            httpx.AsyncClient(base_url=base_url, headers=_headers(0, keyed)) as plain_llm,
            httpx.AsyncClient(base_url=base_url, headers=_headers(1, keyed)) as plain_search,
            httpx.AsyncClient(
                transport=rr.transport("llm"), base_url=base_url, headers=_headers(0, keyed)
            ) as rec_llm,
            httpx.AsyncClient(
                transport=rr.transport("search"), base_url=base_url, headers=_headers(1, keyed)
            ) as rec_search,
        ):
            plain = (plain_llm, plain_search)
            recording = (rec_llm, rec_search)
            # Warm every client: connection pools, and the recorder's own transports (made on their
            # first request, ≈ 25 ms for the TLS context) — once per session, not per request. The
            # warm entries are folded too; the fold is still spread over the timed requests only.
            for i in range(30):
                await _send(plain[i % 2], i, MIN_BODY, "warm", "w", keyed=keyed)
                await _send(recording[i % 2], i, MIN_BODY, "warm", "w", keyed=keyed)
            base: list[tuple[float, float]] = []
            rec: list[tuple[float, float]] = []
            for i, ((_, resp), prompt) in enumerate(zip(sizes, prompts, strict=True)):
                base.append(await _send(plain[i % 2], i, resp, prompt, "p", keyed=keyed))
                rec.append(await _send(recording[i % 2], i, resp, prompt, "r", keyed=keyed))
        start, cpu = time.perf_counter(), _process_cpu()
        await rr.aclose()  # the end-of-session fold: every YAML cassette file written
        fold, fold_cpu = time.perf_counter() - start, _process_cpu() - cpu
    finally:
        server.shutdown()
        server.server_close()
    ms = 1000.0
    return Overhead(
        statistics.mean(w for w, _ in base) * ms,
        statistics.mean(w for w, _ in rec) * ms,
        statistics.mean(c for _, c in base) * ms,
        statistics.mean(c for _, c in rec) * ms,
        fold / N_REQUESTS * ms,
        fold_cpu / N_REQUESTS * ms,
    )


def _process_cpu() -> float:
    """CPU seconds of this process and of every child it waited for (a fold may use workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(keyed: bool = True) -> Overhead:
    """One measurement, with the realistic keys (``keyed``) or without credentials."""
    with tempfile.TemporaryDirectory() as tmp:
        return asyncio.run(_measure(Path(tmp), keyed))


def measure_median(repeats: int = 3, keyed: bool = True) -> tuple[Overhead, list[Overhead]]:
    """:func:`measure` ``repeats`` times: the run with the median CPU overhead, and every run.

    Each run's overhead is against the plain baseline timed alongside it; the median keeps one run
    disturbed by the rest of the machine (another process, the VM's host) from deciding the row.
    """
    runs = sorted((measure(keyed) for _ in range(repeats)), key=lambda run: run.overhead_cpu_ms)
    return runs[len(runs) // 2], runs


def profile(limit: int = 30) -> None:
    """One keyed measurement under cProfile: the harness's functions by internal time."""
    profiler = cProfile.Profile()
    profiler.enable()
    found = measure()
    profiler.disable()
    print(f"(profiled) overhead {found.overhead_cpu_ms:.3f} ms CPU, {found.overhead_wall_ms:.3f} ms wall")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats("oracleproto", limit)
    stats.sort_stats("cumulative").print_stats("oracleproto", limit)


def main(argv: Sequence[str] = ()) -> None:
    """Print the overhead with the realistic keys and without credentials (``--profile``: where it goes)."""
    if "--profile" in argv:
        profile()
        return
    for keyed in (True, False):
        m = measure(keyed)
        what = f"{len(FAKE_KEY)}-char bearer + Tavily key" if keyed else "no credentials"
        print(
            f"{what}: plain {m.base_cpu_ms:.3f}/{m.base_wall_ms:.3f} ms, recording "
            f"{m.rec_cpu_ms:.3f}/{m.rec_wall_ms:.3f} ms (CPU/wall); overhead with fold "
            f"{m.overhead_cpu_ms:.3f} ms CPU, {m.overhead_wall_ms:.3f} ms wall"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
