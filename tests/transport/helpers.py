"""Loopback servers and helpers shared by the transport tests."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from oracleproto.primitives.clock import FakeClock
from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse
from oracleproto.transport.recorder import Mode, RecordReplay

CHAT_PATH = "/v1/chat/completions"


def chat_body(content: str, *, prompt_tokens: int = 10, cost: float | None = None) -> bytes:
    """An OpenAI-shaped chat completion body."""
    usage: dict[str, object] = {"prompt_tokens": prompt_tokens, "completion_tokens": 5, "total_tokens": 15}
    if cost is not None:
        usage["cost"] = cost
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": usage,
        }
    ).encode()


class Counting:
    """A handler wrapper that counts requests (thread-safe) and keeps them."""

    def __init__(self, handler: Callable[[LoopbackRequest], LoopbackResponse]) -> None:
        self.handler = handler
        self.requests: list[LoopbackRequest] = []
        self._lock = threading.Lock()

    def __call__(self, request: LoopbackRequest) -> LoopbackResponse:
        with self._lock:
            self.requests.append(request)
        return self.handler(request)


def echo_chat(request: LoopbackRequest) -> LoopbackResponse:
    """Answer with the last user message reversed (distinct per request)."""
    body = json.loads(request.body)
    last = body["messages"][-1]["content"]
    return LoopbackResponse(body=chat_body(last[::-1]))


def make_rr(cassettes: Path, mode: Mode, **kwargs: object) -> RecordReplay:
    """A RecordReplay with a fake clock."""
    return RecordReplay(cassettes, clock=FakeClock(), mode=mode, **kwargs)  # type: ignore[arg-type]


def all_bytes_under(*roots: Path) -> bytes:
    """Every byte of every file under the given roots."""
    out = bytearray()
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                out += path.read_bytes()
                out += str(path).encode()
    return bytes(out)


def response_state(response: httpx.Response) -> dict[str, Any]:
    """Everything a client can observe of a response, to compare two ways of building one."""
    return {
        "status": response.status_code,
        "reason": response.reason_phrase,
        "headers": response.headers.multi_items(),
        "encoding": response.headers.encoding,
        "content": response.content,
        "text": response.text,
        "closed": response.is_closed,
        "consumed": response.is_stream_consumed,
        "downloaded": response.num_bytes_downloaded,
        "extensions": response.extensions,
        "request": response.request,
    }
