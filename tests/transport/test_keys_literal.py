"""Cache keys against literals: the projection, its JSON, the key digests and the refusals.

Mutation testing (make mutation) found the key code checked mostly by comparing two of its own
outputs. Here every expected value is written out: projections field by field, canonical JSON
as text, and digests computed once with hashlib from that text.
"""

from __future__ import annotations

import re

import pytest

from oracleproto.context import CallContext
from oracleproto.errors import ConfigError, SampleContextError
from oracleproto.transport.keys import (
    canonical_request,
    check_sample_identity,
    checked_channel,
    context_dict,
    entry_key,
    entry_key_from_json,
    is_sampled,
    normalise_host,
    normalise_path,
    parse_body,
    projection_json,
    public_query,
    request_fingerprint,
    shared_channels,
)

URL = "http://127.0.0.1:8123//v1//chat/completions/?b=2&api_key=K&a=&token=T"
BODY = b'{"model": "m", "api_key": "K", "timeout": 5, "messages": []}'
PROJECTION = {
    "v": 1,
    "channel": "llm",
    "method": "POST",
    "host": "loopback",
    "path": "/v1/chat/completions",
    "query": [["a", ""], ["b", "2"]],
    "model": "m",
    "body": {"model": "m", "messages": []},
}
PROJECTION_JSON = (
    '{"body":{"messages":[],"model":"m"},"channel":"llm","host":"loopback","method":"POST","model":"m",'
    '"path":"/v1/chat/completions","query":[["a",""],["b","2"]],"v":1}'
)
# sha256 of PROJECTION_JSON, and of the key material around it, computed with hashlib alone.
FINGERPRINT = "37fae253da6bbeb8b4b341f1bdb6878ee87dae557d508011725072ea636ebda1"
KEY_SHARED = "02cef8ecdac9d089e57ee1ec0f8a8bca2c6aa5827e19d99c1b4ec17211c3d513"
KEY_SAMPLED = "b18efc1831b76bc9f3fcd41e979f22fab3abe30febd37f88a6e02b620a4c1a5b"
CTX = CallContext("sim/a", "q-1", 2)


def test_the_projection_field_by_field() -> None:
    assert canonical_request("llm", "post", URL, BODY) == PROJECTION


def test_projection_json_and_the_digests() -> None:
    assert projection_json(PROJECTION) == (PROJECTION_JSON, '{"messages":[],"model":"m"}')
    assert request_fingerprint(PROJECTION) == FINGERPRINT
    assert entry_key(PROJECTION, None, None) == KEY_SHARED
    assert entry_key_from_json(PROJECTION_JSON, None, None) == KEY_SHARED
    ctx = context_dict(CTX)
    assert ctx == {"model": "sim/a", "question_id": "q-1", "sample": 2, "step": 0}
    assert entry_key(PROJECTION, ctx, 3) == KEY_SAMPLED
    assert entry_key_from_json(PROJECTION_JSON, ctx, 3) == KEY_SAMPLED
    assert context_dict(None) is None


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://API.Example.com:443/v1", "api.example.com"),
        ("http://api.example.com:80/v1", "api.example.com"),
        ("https://api.example.com:80/v1", "api.example.com:80"),
        ("http://h:8080", "h:8080"),
        ("http://localhost:9/x", "loopback"),
        ("http://[::1]:9/x", "loopback"),
        ("file:///x", ""),
    ],
)
def test_normalise_host(url: str, host: str) -> None:
    assert normalise_host(url) == host


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("http://h", "/"),
        ("http://h/", "/"),
        ("http://h//", "/"),
        ("http://h/a//b///", "/a/b"),
        ("http://h/indeX/", "/indeX"),
        ("http://h/v1/", "/v1"),
    ],
)
def test_normalise_path(url: str, path: str) -> None:
    assert normalise_path(url) == path


def test_public_query_keeps_blank_values_and_drops_credentials() -> None:
    assert public_query("http://h/?z=&a=1&x-api-key=S&a=0") == [["a", "0"], ["a", "1"], ["z", ""]]


def test_parse_body() -> None:
    assert parse_body(b"") == (None, False)
    assert parse_body(b'{"a": 1}') == ({"a": 1}, True)
    assert parse_body(b"plain text") == ("plain text", False)
    assert parse_body(b"\xff\xfe") == (
        {"sha256": "b3d510ef04275ca8e698e5b3cbb0ece3949ef9252f0cdc839e9ee347409a2209"},
        False,
    )


def test_bodies_that_are_not_json_objects() -> None:
    text = canonical_request("search", "GET", "https://h/s", b"q=1")
    assert (text["model"], text["body"]) == (None, "q=1")
    empty = canonical_request("search", "GET", "https://h/s", b"")
    assert (empty["model"], empty["body"]) == (None, None)
    listed = canonical_request("llm", "POST", "https://h/s", b'[{"api_key": "K"}]')
    assert (listed["model"], listed["body"]) == (None, [{"api_key": "K"}])
    numeric = canonical_request("llm", "POST", "https://h/s", b'{"model": 5}')
    assert (numeric["model"], numeric["body"]) == (None, {"model": 5})


def test_a_parsed_body_given_is_used_as_is() -> None:
    given = ({"model": "given", "timeout": 3}, True)
    projection = canonical_request("llm", "POST", "https://h/s", b'{"model": "other"}', given)
    assert (projection["model"], projection["body"]) == ("given", {"model": "given"})
    assert given == ({"model": "given", "timeout": 3}, True)  # not changed


@pytest.mark.parametrize(
    ("body", "sampled"),
    [
        ({"temperature": 0}, False),
        ({"temperature": 0.0}, False),
        ({"temperature": 0.5}, True),
        ({"temperature": 2}, True),
        ({"temperature": "0.5"}, True),  # not a number: assume the provider samples
        ({"model": "m"}, True),  # absent: the provider's default samples
        ("text", True),
        (None, True),
    ],
)
def test_is_sampled(body: object, sampled: bool) -> None:
    assert is_sampled({"body": body}) is sampled


def _llm(body: dict[str, object]) -> dict[str, object]:
    return {"host": "api.example.com", "path": "/v1/chat/completions", "model": "m", "body": body}


def test_a_sampled_llm_call_without_identity_is_refused_with_the_fix() -> None:
    tail = (
        " but carries no sample identity: wrap the call in "
        "`with oracleproto.context.call_context(CallContext(model, question_id, sample, step)):` "
        "or send temperature 0; otherwise every sample would share one cache entry"
    )
    with pytest.raises(SampleContextError) as absent:
        check_sample_identity("llm", _llm({"model": "m"}), None)
    assert str(absent.value) == (
        "llm request to api.example.com/v1/chat/completions (model 'm') samples "
        "(temperature absent (provider default sampling))" + tail
    )
    with pytest.raises(SampleContextError) as warm:
        check_sample_identity("llm", _llm({"temperature": 0.7}), None)
    assert str(warm.value) == (
        "llm request to api.example.com/v1/chat/completions (model 'm') samples (temperature 0.7)" + tail
    )


def test_a_body_that_is_not_an_object_samples_at_the_providers_default() -> None:
    with pytest.raises(
        SampleContextError, match=r"samples \(temperature absent \(provider default sampling\)\)"
    ):
        check_sample_identity("llm", {"host": "h", "path": "/v1", "model": None, "body": "text"}, None)


def test_what_needs_no_sample_identity() -> None:
    check_sample_identity("llm", _llm({"temperature": 0}), None)
    check_sample_identity("llm", _llm({"temperature": 0.7}), CTX)
    check_sample_identity("search", _llm({"temperature": 0.7}), None)
    check_sample_identity("detector", _llm({}), None)


def test_shared_channels_and_channel_names() -> None:
    assert shared_channels("identical_search_and_detector") == frozenset({"search", "detector"})
    assert shared_channels("none") == frozenset()
    message = "unknown request_sharing 'all'; use one of identical_search_and_detector, none"
    with pytest.raises(ConfigError, match=f"^{re.escape(message)}$"):
        shared_channels("all")
    assert [checked_channel(c) for c in ("llm", "search", "detector")] == ["llm", "search", "detector"]
    with pytest.raises(ConfigError, match=r"^unknown channel 'LLM'; use one of llm, search, detector$"):
        checked_channel("LLM")
