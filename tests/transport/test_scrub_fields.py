"""Every field of an entry is scrubbed, and Basic-auth credentials are found on their own.

Issue 28 §4: the scrubbing of an entry's ``reason`` could be removed, and the Basic-auth
token could go undecoded, without a test noticing — the existing test put the same
``user:password`` in the URL, so the URL alone supplied every value. Here each source of a
secret is the only one, and the expected values are literals.
"""

from __future__ import annotations

import base64
from pathlib import Path

import httpx

from oracleproto.context import CallContext, call_context
from oracleproto.primitives.redact import url_credentials
from oracleproto.transport.entry import Entry
from oracleproto.transport.scrub import (
    collect_secrets,
    keep_request_headers,
    keep_response_headers,
    redact_entry,
)
from tests.transport.helpers import CHAT_PATH, all_bytes_under, make_rr

#: Put together from parts, so that no line of the repository holds a key-shaped value whole.
KEY = "sk-or-v1-" + "REASONkey0123456789abcdefghijklmnop"
USER = "basic-user-0123"
PASSWORD = "basic-pass-4567-xyz"
# base64 of "basic-user-0123:basic-pass-4567-xyz", written out (not computed with the code's helper).
TOKEN = "YmFzaWMtdXNlci0wMTIzOmJhc2ljLXBhc3MtNDU2Ny14eXo="


def test_the_token_literal_is_what_base64_gives() -> None:
    assert base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode() == TOKEN


def test_a_basic_header_alone_yields_its_decoded_user_password_and_pair() -> None:
    found = collect_secrets([("Authorization", f"Basic {TOKEN}")], "https://h/v1/chat/completions", b"")
    assert found == {f"Basic {TOKEN}", TOKEN, f"{USER}:{PASSWORD}", USER, PASSWORD}


def test_each_secret_header_and_scheme() -> None:
    found = collect_secrets(
        [
            ("X-Api-Key", "xkey-0123456789"),
            ("api-key", "azure-0123456789"),
            ("Proxy-Authorization", f"basic {TOKEN}"),
            ("Cookie", "session=cookie-0123456789"),
            ("Authorization", "Token tok-0123456789"),
            ("X-Request-Id", "not-a-secret-0123456789"),
        ],
        "https://h/v1",
        b"",
    )
    assert found == {
        "xkey-0123456789",
        "azure-0123456789",
        f"basic {TOKEN}",
        TOKEN,
        f"{USER}:{PASSWORD}",
        USER,
        PASSWORD,
        "session=cookie-0123456789",
        "Token tok-0123456789",
        "tok-0123456789",
    }


def test_an_undecodable_or_non_basic_token_adds_nothing_decoded() -> None:
    found = collect_secrets(
        [("Authorization", "Basic not*base64*at*all"), ("Proxy-Authorization", "Digest abcdefghijkl")],
        "https://h/",
        b"",
    )
    assert found == {"Basic not*base64*at*all", "not*base64*at*all", "Digest abcdefghijkl"}
    # A bearer token is taken whole, not decoded (it is not user:password).
    bearer = base64.b64encode(b"looks:like-basic-0123").decode()
    assert collect_secrets([("Authorization", f"Bearer {bearer}")], "https://h/", b"") == {
        f"Bearer {bearer}",
        bearer,
    }


def test_short_values_are_not_hunted() -> None:
    token = base64.b64encode(b"ab:cdefgh").decode()  # "YWI6Y2RlZmdo": user and password too short
    assert collect_secrets([("Authorization", f"Basic {token}")], "https://h/", b"") == {
        f"Basic {token}",
        token,
        "ab:cdefgh",
    }


def test_body_secrets_nested_in_lists_and_dicts() -> None:
    body = b'{"model": "m", "x": [{"api_key": "tvly-nested-0123"}], "api_key": "tvly-top-01234", "k": 5}'
    assert collect_secrets([], "https://h/", body) == {"tvly-nested-0123", "tvly-top-01234"}
    assert collect_secrets([], "https://h/", b"not json api_key") == set()


def test_a_percent_encoded_userinfo_is_found_decoded() -> None:
    # httpx keeps a base URL's userinfo percent-encoded in the URL, and sends it decoded as Basic auth.
    found = url_credentials("https://us%65r-0123:p%40ss%2Fword-99@h:8/v1")
    assert found == {
        "us%65r-0123:p%40ss%2Fword-99",
        "user-0123:p@ss/word-99",
        "us%65r-0123",
        "user-0123",
        "p%40ss%2Fword-99",
        "p@ss/word-99",
    }


def _entry(secret: str) -> Entry:
    return Entry(
        key="k" * 64,
        channel="llm",
        request_meta={"model": "m"},
        request_body=f'{{"echo": "{secret}"}}',
        context=None,
        occurrence=None,
        method="POST",
        uri=f"https://h/v1?q={secret}",
        request_headers={"content-type": ["application/json"]},
        status=401,
        reason=f"Unauthorized: {secret}",
        response_headers={f"x-{secret}": [f"key {secret}"]},
        body=f"bad key {secret}".encode(),
        exception={"type": "X", "message": f"at {secret}"},
        latency_ms=1,
        recorded_at="2026-01-01T00:00:00.000000+00:00",
    )


def test_redact_entry_scrubs_every_field() -> None:
    entry = redact_entry(_entry(KEY), {KEY})
    assert entry.reason == "Unauthorized: [REDACTED]"
    assert entry.uri == "https://h/v1?q=[REDACTED]"
    assert entry.request_body == '{"echo": "[REDACTED]"}'
    assert entry.response_headers == {"x-[REDACTED]": ["key [REDACTED]"]}
    assert entry.body == b"bad key [REDACTED]"
    assert entry.exception == {"type": "X", "message": "at [REDACTED]"}
    assert entry.request_headers == {"content-type": ["application/json"]}
    untouched = _entry(KEY)
    assert redact_entry(untouched, set()) == _entry(KEY)


async def test_a_key_echoed_in_the_reason_phrase_never_reaches_the_cassette(tmp_path: Path) -> None:
    def provider(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401,
            content=b'{"error": {"message": "invalid key"}}',
            extensions={"reason_phrase": f"Unauthorized ({KEY[:30]})".encode()},
        )

    rr = make_rr(tmp_path / "cassettes", "record", inner=httpx.MockTransport(provider))
    async with httpx.AsyncClient(transport=rr.transport("llm")) as client:
        with call_context(CallContext("m", "q", 0)):
            response = await client.post(
                f"http://127.0.0.1:9{CHAT_PATH}",
                json={"model": "m", "messages": ["a"]},
                headers={"Authorization": f"Bearer {KEY}"},
            )
    await rr.aclose()
    assert response.status_code == 401 and response.reason_phrase == "Unauthorized ([REDACTED])"
    written = all_bytes_under(tmp_path / "cassettes")
    assert b"Unauthorized ([REDACTED])" in written
    assert KEY[:12].encode() not in written and KEY[10:22].encode() not in written


async def test_a_basic_password_echoed_without_userinfo_is_scrubbed(tmp_path: Path) -> None:
    def provider(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            401, content=f'{{"error": "user {USER} password {PASSWORD} rejected"}}'.encode()
        )

    rr = make_rr(tmp_path / "cassettes", "record", inner=httpx.MockTransport(provider))
    async with httpx.AsyncClient(transport=rr.transport("llm")) as client:
        with call_context(CallContext("m", "q", 0)):
            response = await client.post(
                f"http://127.0.0.1:9{CHAT_PATH}",
                json={"model": "m", "messages": ["a"]},
                headers={"Authorization": f"Basic {TOKEN}"},
            )
    await rr.aclose()
    assert response.text == '{"error": "user [REDACTED] password [REDACTED] rejected"}'
    written = all_bytes_under(tmp_path / "cassettes")
    assert PASSWORD.encode() not in written and USER.encode() not in written and TOKEN.encode() not in written


def test_scheme_and_token_split_at_the_first_space() -> None:
    found = collect_secrets([("Authorization", "Bearer tok en-123456")], "https://h/", b"")
    assert found == {"Bearer tok en-123456", "tok en-123456"}


def test_a_basic_token_must_be_strict_base64() -> None:
    # "dXNlcjpwYXNzd29yZA==" is "user:password"; with a "*" inside it is not base64 at all.
    assert collect_secrets([("Authorization", "Basic dXNl*cjpwYXNzd29yZA==")], "https://h/", b"") == {
        "Basic dXNl*cjpwYXNzd29yZA==",
        "dXNl*cjpwYXNzd29yZA==",
    }


def test_a_basic_password_may_hold_colons() -> None:
    token = base64.b64encode(b"user-name:pass:word-123").decode()
    found = collect_secrets([("Authorization", f"Basic {token}")], "https://h/", b"")
    assert found == {f"Basic {token}", token, "user-name:pass:word-123", "user-name", "pass:word-123"}


def test_eight_characters_are_a_secret_seven_are_not() -> None:
    found = collect_secrets([("X-Api-Key", "12345678"), ("api-key", "1234567")], "https://h/", b"")
    assert found == {"12345678"}


def test_only_credential_fields_of_a_body_are_secrets() -> None:
    key = "tvly-" + "0123456789"  # from parts: no line holds a key-shaped value whole
    body = b'{"model": "a-long-model-name", "input": "a long question text", "apikey": "%s"}' % key.encode()
    assert collect_secrets([], "https://h/", body) == {key}
    nested = b'{"outer": {"inner": {"api-key": "deep-key-0123456"}}}'
    assert collect_secrets([], "https://h/", nested) == {"deep-key-0123456"}


def test_kept_headers() -> None:
    sent = [
        ("Content-Type", "application/json"),
        ("Authorization", "Bearer sk-0123456789"),
        ("Accept", "text/event-stream"),
        ("X-Stainless-Retry-Count", "1"),
        ("accept", "application/json"),
    ]
    assert keep_request_headers(sent) == {
        "accept": ["text/event-stream", "application/json"],
        "content-type": ["application/json"],
    }
    received = [
        ("X-Request-Id", "r-1"),
        ("Set-Cookie", "s=1"),
        ("Content-Encoding", "gzip"),
        ("Date", "Thu, 01 Jan 2026 00:00:00 GMT"),
        ("OpenAI-Organization", "org-1"),
        ("Content-Type", "application/json"),
        ("x-request-id", "r-2"),
    ]
    assert keep_response_headers(received) == {
        "content-type": ["application/json"],
        "x-request-id": ["r-1", "r-2"],
    }
