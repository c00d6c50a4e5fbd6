"""A capture from a stranger: hostile bytes and code points end in reports, never in a traceback."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import httpx

from oracleproto.conformance import build_responder, responder_report
from oracleproto.context import CallContext, call_context
from tests.conformance.helpers import CHAT, DETECTOR_TEMPLATE, QUESTIONS


def _line(seq: int, path: str, body: bytes, response: bytes = b"\xff\x00", status: int = 200) -> str:
    return json.dumps(
        {
            "seq": seq,
            "t": 0,
            "method": "POST",
            "path": path,
            "headers": [["X-\u202e", "\ud800"]],
            "body_b64": base64.b64encode(body).decode(),
            "status": status,
            "resp_headers": [["Content-Type", "application/json"], ["X-Odd", "\x00\u202e\ud800"]],
            "resp_b64": base64.b64encode(response).decode(),
            "served": "upstream",
            "key": None,
        }
    )


HOSTILE_BODIES = [
    b"\xff\xfe not utf-8",
    b'{"model":"m","messages":[{"role":"user","content":"Will it rain in Paris? \\ud800 \\u202e \\u0000"}]}',
    b'{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":5}]}]}',
    b"[" * 50_000,
    b'{"model":"m","messages":[{"role":"user","content":"Will it rain in Paris?"},'
    b'{"role":"assistant","content":NaN,"tool_calls":[{"id":[1]}]}]}',
    b'{"model":"det","messages":[{"role":"user","content":"audit\\ncutoff_date: \\u202e\\ntitle: \\u0000\\n'
    b'url: \\ud800\\n"}]}',
    b'{"model":"det","messages":"x"}',
    b'{"query":"\\ud800\\u202e\\u001b[2J","end_date":7}',
    b'{"query":"\\ud800\\u202e\\u001b[2J"}',
]


async def test_a_hostile_capture_is_classified_answered_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "hostile.jsonl"
    paths = [CHAT, CHAT, CHAT, CHAT, CHAT, CHAT, CHAT, "/search", "/search"]
    lines = [_line(i + 1, p, b) for i, (p, b) in enumerate(zip(paths, HOSTILE_BODIES, strict=True))]
    path.write_text("\n".join(lines) + "\n")
    responder = build_responder(
        path, detector_model="det", detector_template=DETECTOR_TEMPLATE, questions=QUESTIONS
    )
    problems = [c.located.problem for c in responder.classified if c.located.position is None]
    assert len(problems) == 6
    async with httpx.AsyncClient(transport=responder) as client:
        # Each hostile body sent back as ours: paired where it had a position, else a 400.
        for item in responder.classified:
            with call_context(CallContext("m", "q1", 0, 0)):
                response = await client.post("http://x" + item.exchange.path, content=item.exchange.body)
            assert response.status_code in (200, 400)
            assert response.headers.get("x-odd") is not None or response.status_code == 400
        extra = await client.post("http://x/search", content=b'{"query":"\\u202e\\u0007"}')
    assert extra.status_code == 400 and extra.json()["error"]["message"].isprintable()
    report = responder_report(responder, str(path))
    text = report.render_text()
    assert all(line.isprintable() for line in text.splitlines())
    assert '  search query "<U+202E>\\u0007" end_date none' in text.splitlines()
    assert "  seq 1: llm (no position: the body is not JSON)" in text.splitlines()
    json.dumps(report.as_dict())
