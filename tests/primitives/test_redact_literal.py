"""URL redaction and credential finding on URLs that hold their separators more than once.

Mutation testing (make mutation) found that splitting at the last ``://``, ``?``, ``=``, ``:``
or ``@`` instead of the first (or the reverse) passed every test, as did ignoring ``#``
fragments or the length limit: the URLs tested had each separator once. Likewise the search for
a secret's fragments that hold whitespace (a bearer header's), which the secrets tested held only
whole. Expected values are written out by hand.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from oracleproto.primitives import redact
from oracleproto.primitives.redact import redact_url, scrub_fragments, url_credentials


@pytest.fixture(autouse=True)
def _fresh_plans() -> Iterator[None]:
    # Each secret set's scan plan is memoised; compiled by an earlier test (or by the process a
    # mutation run forks from), it would hide a change to the code that builds it.
    redact._plan.cache_clear()
    yield


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


#: A bearer credential as a header carries it: its windows across the space hold whitespace, so
#: the run scan cannot see them and they are searched for on their own (grouped behind a core).
_BEARER = "Bearer sk-abcdefghijklmnop"  # the space at 6: windows 0 … 6 hold it


@pytest.mark.parametrize(
    ("text", "secret", "scrubbed"),
    [
        # A short secret (< 12) holding a space is searched whole.
        ("x ab cd efg y", "ab cd efg", "x [REDACTED] y"),
        # A short secret of whitespace only.
        ("a\t\t\t\t\t\t\t\tb", "\t" * 8, "a[REDACTED]b"),
        # A 12-character secret holding a space is its own one window.
        ("x Bearer sk-ab y", "Bearer sk-ab", "x [REDACTED] y"),
        # Window 0 alone ("Bearer sk-ab"; the rest of the token is not there).
        ("<Bearer sk-abX>", _BEARER, "<[REDACTED]X>"),
        # Window 6 alone (" sk-abcdefgh"), the last window holding the space: the second group.
        ("<x sk-abcdefghX>", _BEARER, "<x[REDACTED]X>"),
        # Three occurrences of window 0: every one is replaced, the middle one too.
        (
            "1 Bearer sk-abX 2 Bearer sk-abX 3 Bearer sk-abX",
            _BEARER,
            "1 [REDACTED]X 2 [REDACTED]X 3 [REDACTED]X",
        ),
        # The space near the end: window 12 ("jklmno pq rs"), the secret's last, alone.
        ("<jklmno pq rs>", "sk-abcdefghijklmno pq rs", "<[REDACTED]>"),
        # Eleven characters of the secret's end across its space are no fragment: left as they are.
        ("<klmno pq rs>", "sk-abcdefghijklmno pq rs", "<klmno pq rs>"),
        ("<o pq rs>", "sk-abcdefghijklmno pq rs", "<o pq rs>"),
        # Twelve spaces inside a secret are a fragment of it like any other twelve characters.
        ("a" + " " * 12 + "b", "sk-abcd" + " " * 12 + "efghijk", "a[REDACTED]b"),
        # Occurrences of a whitespace window one character apart (13 spaces hold 12 spaces twice).
        ("a" + " " * 13 + "b", " " * 12, "a[REDACTED]b"),
    ],
)
def test_fragments_holding_whitespace_are_replaced_exactly(text: str, secret: str, scrubbed: str) -> None:
    assert scrub_fragments(text, [secret]) == scrubbed
    assert scrub_fragments(text.encode(), [secret]) == scrubbed.encode()
