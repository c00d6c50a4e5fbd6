"""The main-LLM request key (issue 18: one parse, one body hash, fast long-text encoder) is unchanged."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.context import CallContext, call_context, logical_call
from oracleproto.primitives.clock import SystemClock
from oracleproto.primitives.hashing import sha256_hex
from oracleproto.transport.keys import canonical_request, entry_key, parse_body, projection_json
from oracleproto.transport.prepared import PreparedRequest
from oracleproto.transport.recorder import RecordReplay
from oracleproto.transport.scrub import collect_secrets
from oracleproto.transport.shared_keys import SharedKeyMemo

URL = "http://127.0.0.1:8123/v1/chat/completions?n=1&api_key=sk-test-planted-fake-query"
_WORDS = "the forecast of resolved events under a time masked search leak "
_TEXT = st.text(alphabet=st.sampled_from(list('ab "\\\n\té\x7f\x01中')), max_size=20)
#: A prompt as long as the benchmark's (4–48 KB), around hypothesis-made text.
_PROMPT = st.builds(lambda a, n, b: a + _WORDS * n + b, _TEXT, st.integers(0, 800), _TEXT)


def _body(prompt: str, extra: dict[str, Any]) -> bytes:
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": prompt}], **extra}).encode()


def _reference_key(body: bytes, ctx: dict[str, Any] | None, occurrence: int | None) -> tuple[str, str]:
    projection = canonical_request("llm", "POST", URL, body)
    return entry_key(projection, ctx, occurrence), projection_json(projection)[1]


@pytest.fixture(scope="module")
def recorder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RecordReplay]:
    rr = RecordReplay(tmp_path_factory.mktemp("prep") / "c", clock=SystemClock(), mode="record")
    yield rr
    rr.close()


def _prepare(rr: RecordReplay, body: bytes, attempt: int = 0) -> PreparedRequest:
    request = httpx.Request("POST", URL, content=body)
    with logical_call() as call:
        call.attempt = attempt
        return PreparedRequest("llm", request, body, SharedKeyMemo(), rr._occurrence)


#: Each example is its own trajectory (the recorder, shared by the module, counts occurrences).
_QUESTION_IDS = itertools.count()
_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)


@_SETTINGS
@given(_PROMPT, st.sampled_from([{}, {"temperature": 0.7}, {"api_key": "sk-test-planted-fake-body1"}]))
def test_key_body_and_occurrences_match_the_reference(
    recorder: RecordReplay, prompt: str, extra: dict
) -> None:
    body = _body(prompt, extra)
    ctx = CallContext("m", f"q{next(_QUESTION_IDS)}-" + sha256_hex(prompt)[:8], 0)  # a fresh trajectory
    ctx_dict = {"model": ctx.model, "question_id": ctx.question_id, "sample": 0, "step": 0}
    with call_context(ctx):
        keys = [_prepare(recorder, body).key for _ in range(3)]
        retry = _prepare(recorder, body, attempt=1)
    # The same request three times in one trajectory: occurrences 0, 1, 2; a retry reuses the last.
    expected = [_reference_key(body, ctx_dict, n) for n in range(3)]
    assert keys == [key for key, _ in expected]
    assert (retry.key, retry.occurrence, retry.body_json) == (expected[2][0], 2, expected[2][1])


@_SETTINGS
@given(_PROMPT)
def test_key_without_sample_context(recorder: RecordReplay, prompt: str) -> None:
    body = _body(prompt, {"temperature": 0})
    prep = _prepare(recorder, body)
    key, body_json = _reference_key(body, None, None)
    assert (prep.key, prep.occurrence, prep.body_json) == (key, None, body_json)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json at all",
        b"\xff\xfe binary",
        b'{"model": "m", "temperature": 0, "api_key": "sk-test-planted-fake-top", '
        b'"x": {"API_KEY": "sk-test-planted-fake-nested"}}',
        b'{"model":"m","temperature":0,"timeout":"sk-test-planted-fake-timeout"}',
        b'["a", "list", 0]',
    ],
)
def test_secrets_from_the_shared_parse_are_the_same(body: bytes) -> None:
    # Built here, not written out: a "Bearer sk-…" literal in the tree reads like a leaked key.
    headers = [("authorization", "Bearer " + "-".join(("sk", "test", "planted", "fake", "header")))]
    assert collect_secrets(headers, URL, body, parse_body(body)) == collect_secrets(headers, URL, body)


def test_prepared_request_keeps_the_unstripped_parse(recorder: RecordReplay) -> None:
    body = b'{"model":"m","temperature":0,"api_key":"sk-test-planted-fake-top"}'
    prep = _prepare(recorder, body)
    assert prep.parsed_body == parse_body(body)
    assert "sk-test-planted-fake-top" in collect_secrets([], URL, body, prep.parsed_body)
    assert "api_key" not in prep.body_json  # the projection still drops it
