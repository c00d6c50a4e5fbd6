"""``oracleproto sim serve --capture``: a real server on 127.0.0.1, real httpx clients, the file read back."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.conformance.capture import CaptureWriter, read_capture
from oracleproto.conformance.positions import DetectorPosition, LlmPosition, SearchPosition
from oracleproto.conformance.questions import QuestionMatcher
from oracleproto.conformance.samples import classify_capture
from oracleproto.conformance.template import DetectorTemplateMatcher
from oracleproto.sim.faults import FaultConfig
from oracleproto.sim.server import SimConfig, Simulator
from tests.conformance.helpers import DETECTOR_TEMPLATE, QUESTIONS

#: Key-shaped values, put together here so that no line of the repository holds one whole.
LLM_KEY = "sk-" + "conformance-secret-0001"
SEARCH_KEY = "tvly-" + "conformance-secret-0002"


def _chat_body(model: str, content: str) -> bytes:
    body = {"model": model, "messages": [{"role": "user", "content": content}], "temperature": 0.7}
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def _search_body(query: str) -> bytes:
    body = {"api_key": SEARCH_KEY, "query": query, "end_date": "2026-03-01", "max_results": 3}
    return json.dumps(body, separators=(",", ":")).encode()


def test_every_exchange_is_captured_exactly_with_credentials_redacted(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    writer = CaptureWriter(path)
    chat = _chat_body("sim/careful", "Predict: Will it rain in Paris? é")
    detector_prompt = "audit\ncutoff_date: 2026-03-01\ntitle: T\nurl: https://a.example/1\n"
    detector = _chat_body("sim/detector", detector_prompt)
    search = _search_body("rain in Paris")
    with Simulator(SimConfig(seed=3), capture=writer) as sim, httpx.Client() as client:
        auth = {"Authorization": f"Bearer {LLM_KEY}", "Content-Type": "application/json"}
        answers = [
            client.post(sim.llm_base_url + "/chat/completions", content=chat, headers=auth),
            client.post(sim.llm_base_url + "/chat/completions", content=detector, headers=auth),
            client.post(sim.search_base_url + "/search?api_key=" + SEARCH_KEY, content=search),
        ]
    writer.close()
    raw = path.read_bytes()
    assert LLM_KEY.encode() not in raw and SEARCH_KEY.encode() not in raw
    for line in raw.splitlines():
        for field in ("body_b64", "resp_b64"):
            decoded = base64.b64decode(json.loads(line)[field])
            assert LLM_KEY.encode() not in decoded and SEARCH_KEY.encode() not in decoded
    exchanges = read_capture(path)
    assert [e.seq for e in exchanges] == [1, 2, 3]
    first = exchanges[0]
    assert (first.method, first.path, first.status, first.served, first.key) == (
        "POST",
        "/v1/chat/completions",
        200,
        "upstream",
        None,
    )
    assert first.body == chat  # byte for byte (the non-ASCII too)
    assert ("Authorization", "Bearer <redacted>") in first.headers
    assert [name for name, _ in first.resp_headers[:2]] == ["Server", "Date"]
    assert ("Content-Length", str(len(answers[0].content))) in first.resp_headers
    assert [e.resp_body for e in exchanges] == [a.content for a in answers]
    assert exchanges[2].body == search.replace(SEARCH_KEY.encode(), b"<redacted>")
    assert exchanges[2].path == "/search?api_key=[REDACTED]"
    assert 0 < first.t <= exchanges[2].t

    classified = classify_capture(
        exchanges,
        detector_model="sim/detector",
        template=DetectorTemplateMatcher(DETECTOR_TEMPLATE),
        questions=QuestionMatcher(QUESTIONS),
    )
    assert [c.located.position for c in classified] == [
        LlmPosition("sim/careful", "q1", 0, 0),
        DetectorPosition("https://a.example/1", "2026-03-01"),
        SearchPosition("rain in Paris", "2026-03-01"),
    ]


def test_echoed_keys_dropped_connections_and_concurrency(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"
    writer = CaptureWriter(path)
    config = SimConfig(seed=1, chat=FaultConfig(echo_key=True), search=FaultConfig(fail_timeout=1.0))

    async def run(sim: Simulator) -> list[int]:
        async with httpx.AsyncClient() as client:
            chats = [
                client.post(
                    sim.llm_base_url + "/chat/completions",
                    content=_chat_body("sim/hasty", f"question {i}"),
                    headers={"Authorization": f"Bearer {LLM_KEY}"},
                )
                for i in range(20)
            ]
            answers = await asyncio.gather(*chats)
            with pytest.raises(httpx.RemoteProtocolError):
                await client.post(sim.search_base_url + "/search", content=_search_body("x"))
        return [a.status_code for a in answers]

    with Simulator(config, capture=writer) as sim:
        statuses = asyncio.run(run(sim))
    writer.close()
    assert statuses == [200] * 20
    exchanges = read_capture(path)
    assert sorted(e.seq for e in exchanges) == list(range(1, 22))
    raw = path.read_bytes()
    assert LLM_KEY.encode() not in raw
    echoed = [e for e in exchanges if e.status == 200]
    assert all(b"[REDACTED]" in e.resp_body and LLM_KEY[4:-4].encode() not in e.resp_body for e in echoed)
    assert all(
        value == "[REDACTED]" for e in echoed for name, value in e.resp_headers if name == "X-Echo-Key"
    )
    [dropped] = [e for e in exchanges if e.path == "/search"]
    assert (dropped.status, dropped.resp_headers, dropped.resp_body) == (0, (), b"")


def test_sim_serve_capture_option(tmp_path: Path) -> None:
    path = tmp_path / "capture.jsonl"

    def wait(sim: Simulator) -> None:
        httpx.post(sim.search_base_url + "/search", content=_search_body("cli"))

    result = CliRunner().invoke(cli, ["sim", "serve", "--capture", str(path)], obj={"wait": wait})
    assert result.exit_code == 0, result.output
    assert "capturing every exchange to" in result.output
    [exchange] = read_capture(path)
    assert exchange.path == "/search" and b"<redacted>" in exchange.body

    again = CliRunner().invoke(cli, ["sim", "serve", "--capture", str(path)], obj={"wait": wait})
    assert again.exit_code == 2
    assert (
        "already exists and is not empty; give a new file name or remove the old capture (--capture)"
        in again.output
    )
    missing = CliRunner().invoke(
        cli, ["sim", "serve", "--capture", str(tmp_path / "no" / "c.jsonl")], obj={"wait": wait}
    )
    assert missing.exit_code == 2 and "No such file or directory" in missing.output
    assert "Traceback" not in again.output + missing.output
