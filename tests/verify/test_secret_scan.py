"""The export scanner: key shapes, assignments, URL credentials; offsets, never values."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.verify import secret_scan
from oracleproto.verify.secret_scan import SecretHit, scan_bytes
from tests.conftest import ROOT

DEMO_RUN = ROOT / "cassettes" / "demo" / "20260101-000000-de00"


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (b"uri: http://user:hunter2hunter2@host/v1", "URL with a password in its userinfo"),
        (b'"base_url": "https://u:p%40ss@[::1]:8080/v1"', "URL with a password in its userinfo"),
        (b"GET /v1?token=abcdef0123456789 HTTP/1.1", "credential query parameter 'token' in a URL"),
        (b"https://h/v1/chat?model=m&key=abcdef0123", "credential query parameter 'key' in a URL"),
        (
            b"https://h/v1/chat?subscription-key=abcdef0123",
            "credential query parameter 'subscription-key' in a URL",
        ),
        (b"https://h/v1?Access_Token=abcdef0123", "credential query parameter 'Access_Token' in a URL"),
    ],
)
def test_url_credentials_are_found_by_offset(data: bytes, kind: str) -> None:
    hits = scan_bytes(data, "f.yaml")
    assert [h.kind for h in hits] == [kind]
    secret_start = hits[0].offset
    assert data[secret_start - 1 : secret_start] in (b":", b"=")  # the offset points at the value
    assert data[secret_start:].decode() not in str(hits[0])


@pytest.mark.parametrize(
    "data",
    [
        b"uri: http://[REDACTED]@host/v1?api_key=[REDACTED]&token=[REDACTED]",
        b"uri: http://%5BREDACTED%5D@host/v1",
        b"ssh://git@github.com/owner/repo",  # a user name without a password
        b"http://[::1]:8080/v1?api-version=2024-02-01&q=keys",
        b"https://h/search?monkey=1&tokens=5",
        b"http://127.0.0.1:41234/v1/chat/completions",
    ],
)
def test_redacted_or_harmless_urls_pass(data: bytes) -> None:
    assert scan_bytes(data, "f") == []


def test_an_api_key_assignment_is_one_hit_at_its_value() -> None:
    # '"api_key": "' is 12 bytes; the value is too short for the generic rule.
    assert scan_bytes(b'"api_key": "abc123"', "f.json") == [
        SecretHit("f.json", 12, "api_key assignment with a non-redacted value")
    ]


def test_a_url_password_is_one_hit_named_by_file_at_the_password() -> None:
    # "uri: http://user:" is 17 bytes.
    assert scan_bytes(b"uri: http://user:hunter2hunter2@host/v1", "f.yaml") == [
        SecretHit("f.yaml", 17, "URL with a password in its userinfo")
    ]


def test_a_query_parameter_after_one_already_reported_is_still_found() -> None:
    # "?api_key=" is an assignment hit at 16 (its query-parameter hit is the same offset, left
    # out); "&token=" after it is a query-parameter hit at 29. Two hits, sorted by offset.
    assert scan_bytes(b"GET /v1?api_key=abc123&token=def456 HTTP/1.1", "log") == [
        SecretHit("log", 16, "api_key assignment with a non-redacted value"),
        SecretHit("log", 29, "credential query parameter 'token' in a URL"),
    ]


# The anchored scans find exactly what the patterns' scans from every position find.
_PIECES = st.sampled_from(
    [b"api", b"API", b"Api", b"_", b"-", b"key", b"keys", b'"', b"'", b":", b"=", b" ", b"[", b"]",
     b"://", b"@", b"/", b"http", b"s3+x.y-z", b"1", b"a", b"Z", b".", b"+", b"\xe2\x80\xa6", b"\n",
     b"user", b"pass", b"{", b"}", b",", b"&", b"#", b"?", b"<", b"\x00", b"\xff"]
)  # fmt: skip


def _spans(matches: Iterator[re.Match[bytes]]) -> list[tuple[int, int, int]]:
    return [(m.start("value"), m.end("value"), m.end()) for m in matches]


@settings(max_examples=600, derandomize=True, database=None, deadline=None)
@given(st.lists(_PIECES, max_size=40).map(b"".join))
def test_anchored_scans_equal_the_patterns_scans(data: bytes) -> None:
    assert _spans(secret_scan.assignments(data)) == _spans(secret_scan._ASSIGNMENT.finditer(data))
    assert _spans(secret_scan.userinfo_urls(data)) == _spans(secret_scan._URL_USERINFO.finditer(data))


@pytest.mark.parametrize(
    "data",
    [
        b'x "api_key": "value-one" y API-KEYS=[value-two] apikey:"abc"',
        b"'api_keys' : [ 'a', 'b' ] and apiapi_key=zz api_key=api_key=v",
        b"1http://u:p@h 9a+b.c://user:pw@h x://:p@h ://u:p@h a://u:p@b://c:d@e",
        b"http://u:p@h/x?http://v:q@i ssh://git@github.com mailto://a:b:c@d",
    ],
)
def test_anchored_scans_on_known_text(data: bytes) -> None:
    assert _spans(secret_scan.assignments(data)) == _spans(secret_scan._ASSIGNMENT.finditer(data))
    assert _spans(secret_scan.userinfo_urls(data)) == _spans(secret_scan._URL_USERINFO.finditer(data))
    assert list(secret_scan.assignments(data)) or list(secret_scan.userinfo_urls(data))  # not vacuous


def test_anchored_scans_on_the_demo_run() -> None:
    for path in sorted(p for p in DEMO_RUN.rglob("*") if p.is_file()):
        data = path.read_bytes()
        assert _spans(secret_scan.assignments(data)) == _spans(secret_scan._ASSIGNMENT.finditer(data))
        assert _spans(secret_scan.userinfo_urls(data)) == _spans(secret_scan._URL_USERINFO.finditer(data))
