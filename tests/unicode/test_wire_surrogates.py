"""Issue 28 §1 (b): a lone surrogate in a page reaches the detector, the cassette and replay.

The harness sends it escaped (the profile's JsonStyle), and the recorder keys and stores the
request as canonical JSON, which held it raw until now: UTF-8 could not encode it and the run
ended with exit 70. The canonical text now carries it as its JSON escape; requests without one
keep their text and keys (only a request whose text UTF-8 cannot encode pays for the escape).
"""

from __future__ import annotations

import json

from oracleproto.primitives.hashing import canonical_json
from oracleproto.sim.hostile import INVALID_BYTES, INVALID_UTF8, HostileText, wire_bytes
from oracleproto.transport.keys import canonical_request, entry_key_from_json, projection_json
from oracleproto.transport.shared_keys import shared_key
from tests.unicode.evidence import _cassettes
from tests.unicode.recording import HostileRun

URL = "http://127.0.0.1:9/v1/chat/completions"


def test_a_detector_request_holding_a_lone_surrogate_is_keyed_and_stored() -> None:
    body = json.dumps({"model": "sim/detector", "messages": [{"role": "user", "content": "t\ud800x"}]})
    keyed = shared_key("detector", "POST", URL, body.encode("utf-8"))
    assert "t\\ud800x" in keyed.body_json
    assert keyed.body_json.encode("utf-8")  # encodable: the key and the cassette can hold it
    assert json.loads(keyed.body_json)["messages"][0]["content"] == "t\ud800x"


def test_requests_without_a_lone_surrogate_keep_their_text_and_key() -> None:
    for value in ({"messages": [{"content": "a\\ud800 is text here, é \u2028"}]}, {"q": "plain"}):
        body = json.dumps(value).encode("utf-8")
        keyed = shared_key("search", "POST", URL, body)
        projection = canonical_request("search", "POST", URL, body)
        assert keyed.body_json == canonical_json(value)
        assert keyed.key == entry_key_from_json(projection_json(projection)[0], None, None)


def test_the_hostile_run_sent_and_recorded_lone_surrogates(hostile_run: HostileRun) -> None:
    store = _cassettes(hostile_run.run_dir)
    detector = store.find(lambda e: e.channel == "detector" and "\\ud800" in e.request_body)
    assert detector, "no detector request carried a page's lone surrogate"
    search = store.find(lambda e: e.channel == "search" and "\\ud800" in e.request_body)
    assert search, "no Tavily request carried a query's lone surrogate"


def test_the_simulator_writes_bodies_as_providers_do() -> None:
    data = wire_bytes({"a": f"x\ud800\u2028é{INVALID_UTF8}"})
    assert data == b'{"a": "x\\ud800\xe2\x80\xa8\xc3\xa9' + INVALID_BYTES + b'"}'
    hostile = HostileText(("one", "two"))
    payload = {"query": "q", "results": [{"title": "t", "url": "https://x.example/p", "content": "c"}]}
    first = hostile.search(b"request-1", payload)
    assert hostile.search(b"request-1", payload) == first  # a retry gets the same string
    assert b"two" in first and b"two" not in hostile.search(b"request-2", payload)
