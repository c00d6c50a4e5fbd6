"""A scripted loopback handler: serve queued responses in order, record every request."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse


def json_response(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> LoopbackResponse:
    """A JSON response."""
    return LoopbackResponse(
        status=status,
        body=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
    )


def chat_body(content: str | None = "hi", **extra: Any) -> dict[str, Any]:
    """A minimal OpenAI chat completion body."""
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "served-model",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }
    body.update(extra)
    return body


class Script:
    """Serves ``responses`` in order (the last one repeats); ``requests`` records what arrived."""

    def __init__(self, *responses: LoopbackResponse | Callable[[LoopbackRequest], LoopbackResponse]) -> None:
        self._responses = list(responses)
        self._lock = threading.Lock()
        self.requests: list[LoopbackRequest] = []

    def __call__(self, request: LoopbackRequest) -> LoopbackResponse:
        with self._lock:
            index = len(self.requests)
            self.requests.append(request)
            item = self._responses[min(index, len(self._responses) - 1)]
        return item(request) if callable(item) else item

    def bodies(self) -> list[dict[str, Any]]:
        """Decoded JSON request bodies, in arrival order."""
        return [json.loads(r.body) for r in self.requests]
