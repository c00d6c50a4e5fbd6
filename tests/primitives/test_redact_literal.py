"""URL redaction and credential finding on URLs that hold their separators more than once.

Mutation testing (make mutation) found that splitting at the last ``://``, ``?``, ``=``, ``:``
or ``@`` instead of the first (or the reverse) passed every test, as did ignoring ``#``
fragments or the length limit: the URLs tested had each separator once. Expected values are
written out by hand.
"""

from __future__ import annotations

import pytest

from oracleproto.primitives.redact import redact_url, scrub_fragments, url_credentials


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        # A credential value holding "=": the name ends at the first "=".
        ("https://h/p?api_key=x=y&a=1", "https://h/p?api_key=[REDACTED]&a=1"),
        # A URL inside a query value is not the URL's scheme and authority.
        ("https://h/r?next=http://u:pw@x", "https://h/r?next=http://u:pw@x"),
        # The authority ends at the first "/", "?" or "#" (an "@" later is the path's).
        ("https://h/users/@me/x", "https://h/users/@me/x"),
        ("http://userX:pw@h/p", "http://[REDACTED]@h/p"),
        ("http://us@er:pw@h/p", "http://[REDACTED]@h/p"),
        # The query starts at the first "?".
        ("https://h/p?token=t?x=1", "https://h/p?token=[REDACTED]"),
        ("https://h/p#access_token=abc&x=1", "https://h/p#access_token=[REDACTED]&x=1"),
        # Without a scheme there is no authority to redact.
        ("user@h/p?token=abc", "user@h/p?token=[REDACTED]"),
    ],
)
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@pytest.mark.parametrize(
    ("url", "found"),
    [
        (
            "https://u:secretpw1@h/?next=http://x",
            {"u:secretpw1", "secretpw1"},
        ),
        ("https://host.example/people/@someone?x=1", set()),
        ("https://us@er:password1@h/", {"us@er:password1", "password1"}),
        ("https://user:pa:ss12345@h/", {"user:pa:ss12345", "pa:ss12345"}),
        ("https://h/p#access_token=abcdefgh12", {"abcdefgh12"}),
        ("https://h/p?token=abcdefgh12?x=1", {"abcdefgh12?x=1"}),
        ("https://h/p?token=abc=defgh123", {"abc=defgh123"}),
        ("https://h/?model=abcdefgh1&q=long-query-text", set()),
        # Exactly MIN_SECRET (8) characters is long enough; 7 is not.
        ("https://h/?token=12345678&key=1234567", {"12345678"}),
        ("https://h/?token=a%2Bb%2Bc%2Bd%2Be", {"a%2Bb%2Bc%2Bd%2Be", "a+b+c+d+e"}),
    ],
)
def test_url_credentials(url: str, found: set[str]) -> None:
    assert url_credentials(url) == found


def test_overlapping_occurrences_of_a_fragment_are_all_replaced() -> None:
    # The 12-character window "aaaaaaaaaaaa" occurs at 0 and at 1 in 13 a's: both are replaced.
    assert scrub_fragments("a" * 13, ["a" * 13]) == "[REDACTED]"
    assert scrub_fragments(b"x" + b"a" * 13 + b"y", ["a" * 14]) == b"x[REDACTED]y"
