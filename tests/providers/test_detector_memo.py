"""The detector reads each distinct reply and renders each distinct prompt once (same values)."""

from __future__ import annotations

import asyncio
from datetime import date

import httpx

from oracleproto.primitives.clock import FakeClock
from oracleproto.providers.detector import LeakDetector
from oracleproto.providers.types import SearchResult
from oracleproto.settings.model import DetectorSettings, LLMSettings
from tests.transport.helpers import chat_body

_REQUEST = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions", content=b"{}")


def test_detector_reads_and_prompts_once_per_distinct_input() -> None:
    http = httpx.AsyncClient()
    detector = LeakDetector(
        http,
        DetectorSettings(_env_file=None, model="d"),  # type: ignore[call-arg]
        LLMSettings(_env_file=None, base_url="http://127.0.0.1:1/v1"),  # type: ignore[call-arg]
        FakeClock(),
    )
    asyncio.run(http.aclose())
    result = SearchResult(title="t", url="u", content="c", raw_content=None, published_date=None)
    twin = SearchResult(title="t", url="u", content="c", raw_content=None, published_date=None)
    first = detector.build_body(result, date(2026, 1, 1))
    assert detector.build_body(twin, date(2026, 1, 1)) == first and len(detector._prompts) == 1
    assert detector.build_body(result, date(2026, 1, 2)) != first

    reply = chat_body('{"verdict": "drop", "reason": "after"}')
    ext = {"oracleproto.latency_ms": 7, "oracleproto.recorded_at": "2026-01-01T00:00:00+00:00"}
    reads = [
        detector._read(httpx.Response(200, content=reply, extensions=dict(ext), request=_REQUEST), 0.0)
        for _ in range(3)
    ]
    assert reads[0] == reads[1] == reads[2] == detector._parse_reply(reply, 7, None)  # type: ignore[arg-type]
    assert reads[0][1] is not None and reads[0][1].label == "drop" and reads[0][1].latency_ms == 7
    assert len(detector._replies) == 1
    other = detector._read(
        httpx.Response(200, content=reply, extensions={**ext, "oracleproto.latency_ms": 8}, request=_REQUEST),
        0.0,
    )
    assert other[1] is not None and other[1].latency_ms == 8
