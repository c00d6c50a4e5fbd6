"""The export scanner: key shapes, assignments, URL credentials; offsets, never values."""

from __future__ import annotations

import pytest

from oracleproto.verify.secret_scan import SecretHit, scan_bytes


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
