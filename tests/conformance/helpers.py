"""Synthetic captured exchanges for the conformance tests (shapes of the earlier harness's wire)."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from oracleproto.conformance.capture import CaptureExchange
from oracleproto.dataset.models import Question

CHAT = "/v1/chat/completions"
DETECTOR_TEMPLATE = "audit\ncutoff_date: {{cutoff_date}}\ntitle: {{title}}\nurl: {{url}}\n"


def question(qid: str, event: str) -> Question:
    return Question(qid, "single", "yes_no", event, ("Yes", "No"), frozenset({"A"}), date(2026, 3, 1))


QUESTIONS = [question("q1", "Will it rain in Paris?"), question("q2", "Will it rain?")]


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def exchange(seq: int, path: str, body: bytes, response: bytes = b"{}", status: int = 200) -> CaptureExchange:
    return CaptureExchange(
        seq,
        float(seq),
        "POST",
        path,
        (),
        body,
        status,
        (("Content-Type", "application/json"),),
        response,
        "upstream",
        None,
    )


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(content: str | None, *call_ids: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if call_ids:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": "web_search", "arguments": "{}"}}
            for i in call_ids
        ]
    return message


def llm(
    seq: int,
    messages: list[dict[str, Any]],
    reply: dict[str, Any] | None = None,
    *,
    model: str = "m",
    status: int = 200,
) -> CaptureExchange:
    body = dumps({"model": model, "messages": messages, "temperature": 0.7})
    response = (
        dumps({"choices": [{"index": 0, "message": reply or assistant("done")}]}) if status == 200 else b"{}"
    )
    return exchange(seq, CHAT, body, response, status)


def search(
    seq: int, query: str, end_date: str | None = "2026-03-01", response: bytes = b'{"results":[]}'
) -> CaptureExchange:
    body: dict[str, Any] = {"api_key": f"key-{seq}", "query": query}
    if end_date is not None:
        body["end_date"] = end_date
    return exchange(seq, "/search", dumps(body), response)


def detector_body(url: str, cutoff: str = "2026-03-01", title: str = "T", model: str = "det") -> bytes:
    prompt = f"audit\ncutoff_date: {cutoff}\ntitle: {title}\nurl: {url}\n"
    return dumps({"model": model, "messages": [user(prompt)], "max_tokens": 50, "temperature": 0})


def detector(seq: int, url: str, response: bytes = b'{"verdict":"keep"}', **kwargs: str) -> CaptureExchange:
    return exchange(seq, CHAT, detector_body(url, **kwargs), response)
