"""The URL redactor and the key-fragment scrubber (``oracleproto.primitives.redact``)."""

from __future__ import annotations

import pytest

from oracleproto.primitives.redact import (
    REDACTED,
    is_credential_param,
    redact_url,
    redact_urls_in_text,
    scrub_fragments,
    scrub_text,
    url_credentials,
)

KEY = "sk-or-v1-" + "0123456789" + "abcdefghijklmnopqrstuv"  # made up; put together from parts


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://user:pw@host/v1", "http://[REDACTED]@host/v1"),
        ("https://KEYONLY@api.example.com/v1", "https://[REDACTED]@api.example.com/v1"),
        ("http://u:p%40ss%3Aword@host:8443/v1", "http://[REDACTED]@host:8443/v1"),
        # An unencoded '@' in the password: the host is what follows the last '@'.
        ("http://u:p@ss@host/v1", "http://[REDACTED]@host/v1"),
        ("http://u:pw@[::1]:8080/v1/chat", "http://[REDACTED]@[::1]:8080/v1/chat"),
        ("http://[2001:db8::1]:8080/v1?a=1", "http://[2001:db8::1]:8080/v1?a=1"),
        ("https://h/v1?api_key=S&model=x", "https://h/v1?api_key=[REDACTED]&model=x"),
        ("https://h/v1?token=S", "https://h/v1?token=[REDACTED]"),
        ("https://h/v1?key=S", "https://h/v1?key=[REDACTED]"),
        ("https://h/v1?api-key=S&x-api-key=T", "https://h/v1?api-key=[REDACTED]&x-api-key=[REDACTED]"),
        ("https://h/v1?Access_Token=S", "https://h/v1?Access_Token=[REDACTED]"),
        ("https://h/v1?subscription-key=S&sig=T", "https://h/v1?subscription-key=[REDACTED]&sig=[REDACTED]"),
        ("https://h/cb#access_token=S&state=1", "https://h/cb#access_token=[REDACTED]&state=1"),
        # Non-credential parameters keep their exact bytes (encoding, order, bare flags).
        (
            "https://h/v1?api-version=2024-02-01&q=a%20b&flag",
            "https://h/v1?api-version=2024-02-01&q=a%20b&flag",
        ),
        ("https://h/v1?monkey=1&keys=2", "https://h/v1?monkey=1&keys=2"),
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
        ("/v1/chat?api_key=S", "/v1/chat?api_key=[REDACTED]"),
        ("", ""),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    assert redact_url(url) == expected


def test_a_key_in_the_path_is_redacted_only_when_known() -> None:
    # Decision (docs/design/security.md, Secrets): a path segment cannot be told from a route by its
    # shape, so only known keys are removed from paths; settings refuse such base URLs.
    url = f"https://h/v1/{KEY}/chat/completions"
    assert redact_url(url) == url
    assert redact_url(url, [KEY]) == "https://h/v1/[REDACTED]/chat/completions"


def test_url_credentials_collects_userinfo_and_credential_params_raw_and_decoded() -> None:
    found = url_credentials("http://apiuser:p%40ssword123@host/v1?token=tok%2Bvalue99&model=m")
    assert {"apiuser:p%40ssword123", "p%40ssword123", "p@ssword123", "tok%2Bvalue99", "tok+value99"} <= found
    assert "m" not in found and "apiuser" not in found  # shorter than 8 characters
    assert url_credentials("https://api.openai.com/v1?api-version=2024") == set()


def test_is_credential_param() -> None:
    for name in (
        "api_key",
        "API-KEY",
        "apikey",
        "key",
        "token",
        "access_token",
        "x-api-key",
        "password",
        "sig",
    ):
        assert is_credential_param(name), name
    for name in ("api-version", "model", "keys", "monkey", "q", "tokens_max"):
        assert not is_credential_param(name), name


@pytest.mark.parametrize(
    "echo",
    [
        KEY,  # whole
        KEY[:24],  # prefix (OpenAI-style "Incorrect API key provided: <the first 24 letters>****")
        KEY[-16:],  # suffix
        KEY[9:21],  # exactly 12 characters from the middle
    ],
)
def test_fragments_of_twelve_or_more_characters_are_scrubbed(echo: str) -> None:
    text = f"error: key {echo}**** rejected"
    scrubbed = scrub_fragments(text, [KEY])
    assert scrubbed == f"error: key {REDACTED}**** rejected"
    assert scrub_fragments(text.encode(), [KEY]) == scrubbed.encode()


def test_shorter_fragments_and_short_secrets() -> None:
    assert scrub_fragments(f"hint {KEY[:11]}…", [KEY]) == f"hint {KEY[:11]}…"  # 11 chars: kept
    assert scrub_fragments("pw=hunter22!", ["hunter22!"]) == f"pw={REDACTED}"  # whole short secret
    assert scrub_fragments("pw=hunter2", ["hunter2"]) == "pw=hunter2"  # under 8: never hunted
    assert scrub_fragments("nothing here", []) == "nothing here"


def test_overlapping_and_repeated_fragments_merge_into_one_marker() -> None:
    other = "tvly-fake-key-ABCDEFG-HIJKLMN"
    text = f"{KEY[:20]}{KEY[20:]} and {other[3:20]} and again {KEY[5:30]}"
    scrubbed = scrub_fragments(text, [KEY, other])
    assert scrubbed == f"{REDACTED} and {REDACTED} and again {REDACTED}"


def test_scrub_text_redacts_urls_then_fragments() -> None:
    text = f"call to http://u:pw@h:1/v1?api_key=zzz failed: Incorrect API key {KEY[:24]}****"
    assert (
        scrub_text(text, [KEY])
        == f"call to http://{REDACTED}@h:1/v1?api_key={REDACTED} failed: Incorrect API key {REDACTED}****"
    )
    assert (
        redact_urls_in_text("see 'https://a:b@h/x' and ftp://h/y")
        == f"see 'https://{REDACTED}@h/x' and ftp://h/y"
    )
