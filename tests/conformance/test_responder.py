"""The responder: pairs our requests with captured exchanges and answers with the captured response."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import httpx
import pytest

from oracleproto.conformance import build_responder, responder_report
from oracleproto.conformance.capture import CaptureExchange
from oracleproto.conformance.positions import LlmPosition
from oracleproto.conformance.questions import QuestionMatcher
from oracleproto.conformance.responder import CaptureResponder
from oracleproto.conformance.samples import classify_capture
from oracleproto.conformance.template import DetectorTemplateMatcher
from oracleproto.context import CallContext, call_context
from oracleproto.dataset.models import Question
from tests.conformance.conftest import DETECTOR_MODEL
from tests.conformance.helpers import (
    CHAT,
    DETECTOR_TEMPLATE,
    QUESTIONS,
    detector,
    detector_body,
    dumps,
    exchange,
    llm,
    search,
    user,
)

PARIS = user("Predict: Will it rain in Paris?")
BASE = "http://capture.invalid"


def _responder(*exchanges: CaptureExchange) -> CaptureResponder:
    template = DetectorTemplateMatcher(DETECTOR_TEMPLATE)
    classified = classify_capture(
        exchanges, detector_model="det", template=template, questions=QuestionMatcher(QUESTIONS)
    )
    return CaptureResponder(classified, detector_model="det", template=template)


async def _post(client: httpx.AsyncClient, path: str, body: bytes) -> httpx.Response:
    return await client.post(BASE + path, content=body, headers={"Authorization": "Bearer ours"})


async def test_an_identical_request_gets_the_captured_answer() -> None:
    captured = llm(1, [PARIS])
    captured = CaptureExchange(
        **{
            **vars(captured),
            "resp_headers": (
                ("Content-Type", "application/json"),
                ("Content-Length", "1"),
                ("Content-Encoding", "gzip"),
                ("x-request-id", "r1"),
            ),
        }
    )
    responder = _responder(captured)
    async with httpx.AsyncClient(transport=responder) as client:
        with call_context(CallContext("m::r5::c4", "q1", 0, 0)):
            response = await _post(client, CHAT, captured.body)
    assert response.status_code == 200 and response.content == captured.resp_body
    assert response.headers["x-request-id"] == "r1" and "content-encoding" not in response.headers
    [pairing] = responder.pairings
    assert pairing.identical and pairing.captured is not None and pairing.captured.exchange.seq == 1
    report = responder_report(responder, "cap.jsonl")
    assert report.ok and report.channels[0].identical == 1


async def test_a_different_request_is_answered_and_reported_with_its_difference() -> None:
    responder = _responder(search(1, "rain"))
    ours = dumps({"api_key": "mine", "query": "rain", "end_date": "2026-03-01", "max_results": 5})
    async with httpx.AsyncClient(transport=responder) as client:
        response = await _post(client, "/search", ours)
    assert response.status_code == 200 and response.json() == {"results": []}
    report = responder_report(responder, "cap.jsonl")
    search_report = report.channels[1]
    assert (search_report.ours, search_report.paired, search_report.identical) == (1, 1, 0)
    [difference] = search_report.differences
    assert difference.detail == "keys [api_key, query, end_date, max_results] vs [api_key, query, end_date]"
    assert not report.ok


async def test_an_identical_exchange_is_preferred_over_an_earlier_one() -> None:
    first = search(1, "rain", response=b'{"n":1}')
    second = exchange(2, "/search", dumps({"query": "rain", "end_date": "2026-03-01", "x": 1}), b'{"n":2}')
    responder = _responder(first, second)
    async with httpx.AsyncClient(transport=responder) as client:
        answers = [
            (await _post(client, "/search", second.body)).json(),
            (await _post(client, "/search", second.body)).json(),
        ]
    assert answers == [{"n": 2}, {"n": 1}]
    assert [p.identical for p in responder.pairings] == [True, False]


async def test_nothing_left_at_the_position_is_a_terminal_400() -> None:
    responder = _responder(search(1, "rain"))
    async with httpx.AsyncClient(transport=responder) as client:
        response = await _post(client, "/search", dumps({"query": "snow\u202e", "end_date": "2026-03-01"}))
        with call_context(CallContext("m", "q1", 0, 0)):
            orphan = await _post(client, CHAT, b"{not json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert (
        error["message"]
        == 'conformance: no captured exchange at search query "snow<U+202E>" end_date 2026-03-01'
    )
    assert (
        orphan.json()["error"]["message"]
        == "conformance: no captured exchange at llm (no position: the body is not JSON)"
    )
    report = responder_report(responder, "cap.jsonl")
    assert [u.position for u in report.channels[1].ours_unmatched] == [
        'search query "snow<U+202E>" end_date 2026-03-01'
    ]
    assert [(u.seq, u.position) for u in report.channels[1].captured_unused] == [
        (1, 'search query "rain" end_date 2026-03-01')
    ]


async def test_concurrent_identical_detector_requests_take_distinct_exchanges() -> None:
    same = detector_body("https://a.example/1", model="det")
    exchanges = [
        detector(1, "https://a.example/1", title="other", response=b'{"v":1}'),
        detector(2, "https://a.example/1", response=b'{"v":2}'),
        detector(3, "https://a.example/1", response=b'{"v":3}'),
    ]
    responder = _responder(*exchanges)
    async with httpx.AsyncClient(transport=responder) as client:
        answers = await asyncio.gather(*(_post(client, CHAT, same) for _ in range(4)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 200, 200, 400]
    assert sorted(a.json().get("v", 0) for a in answers) == [0, 1, 2, 3]
    assert sorted(p.identical for p in responder.pairings) == [False, False, True, True]
    channel = responder_report(responder, "cap.jsonl").channels[2]
    assert (channel.ours, channel.captured, channel.paired, channel.identical) == (4, 3, 3, 2)
    assert channel.differences[0].path == "messages[0].content"


async def test_a_captured_dropped_connection_is_a_transport_error() -> None:
    responder = _responder(search(1, "rain"), exchange(2, "/search", search(1, "rain").body, b"", status=0))
    async with httpx.AsyncClient(transport=responder) as client:
        first = await _post(client, "/search", dumps({"query": "rain", "end_date": "2026-03-01", "other": 1}))
        with pytest.raises(httpx.RemoteProtocolError, match="captured exchange had no response"):
            await _post(client, "/search", dumps({"query": "rain", "end_date": "2026-03-01", "other": 1}))
    assert first.status_code == 200


@pytest.mark.shared
@pytest.mark.parametrize("name", ["ref-live.jsonl", "ref-script.jsonl"])
async def test_replaying_a_capture_against_itself_conforms(
    earlier: Path, detector_template_text: str, subset_questions: list[Question], name: str
) -> None:
    responder = build_responder(
        earlier / "captures" / name,
        detector_model=DETECTOR_MODEL,
        detector_template=detector_template_text,
        questions=subset_questions,
    )
    items = list(responder.classified)
    random.Random(3).shuffle(items)

    async def send(client: httpx.AsyncClient, index: int) -> httpx.Response:
        item = items[index]
        position = item.located.position
        context = (
            CallContext(f"{position.model}::r5::c4", position.question_id, position.sample, position.step)
            if isinstance(position, LlmPosition)
            else None
        )
        with call_context(context) if context else _nothing():
            return await _post(client, item.exchange.path, item.exchange.body)

    async with httpx.AsyncClient(transport=responder) as client:
        answers = await asyncio.gather(*(send(client, i) for i in range(len(items))))
    # Identical requests at one position (one search from several models) may take each other's
    # exchange; every captured answer is still handed out exactly once.
    assert sorted(a.content for a in answers) == sorted(item.exchange.resp_body for item in items)
    report = responder_report(responder, name)
    assert report.ok, report.render_text()
    assert json.loads(json.dumps(report.as_dict()))["ok"] is True


class _nothing:  # noqa: N801 - a null context manager
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None
