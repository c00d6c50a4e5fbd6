"""``scrub_fragments``'s probed search (issue 18) replaces exactly what the window-by-window search did."""

from __future__ import annotations

from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.primitives.redact import MIN_FRAGMENT, MIN_SECRET, REDACTED, scrub_fragments


def _reference_spans(text: str | bytes, secret: str | bytes) -> list[tuple[int, int]]:
    """The search before issue 18: every window of a long secret, each hit extended to the right."""
    spans: list[tuple[int, int]] = []
    if len(secret) < MIN_FRAGMENT:
        start = text.find(secret)  # type: ignore[arg-type]
        while start != -1:
            spans.append((start, start + len(secret)))
            start = text.find(secret, start + 1)  # type: ignore[arg-type]
        return spans
    for i in range(len(secret) - MIN_FRAGMENT + 1):
        window = secret[i : i + MIN_FRAGMENT]
        start = text.find(window)  # type: ignore[arg-type]
        while start != -1:
            end, j = start + MIN_FRAGMENT, i + MIN_FRAGMENT
            while end < len(text) and j < len(secret) and text[end : end + 1] == secret[j : j + 1]:
                end, j = end + 1, j + 1
            spans.append((start, end))
            start = text.find(window, start + 1)  # type: ignore[arg-type]
    return spans


def reference(value: str | bytes, secrets: Iterable[str]) -> str | bytes:
    wanted = sorted({s for s in secrets if len(s) >= MIN_SECRET}, key=len, reverse=True)
    if not wanted or not value:
        return value
    forms = [s.encode("utf-8") if isinstance(value, bytes) else s for s in wanted]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(span for s in forms for span in _reference_spans(value, s)):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    marker: str | bytes = REDACTED.encode("utf-8") if isinstance(value, bytes) else REDACTED
    parts: list[str | bytes] = []
    last = 0
    for start, end in merged:
        parts.extend((value[last:start], marker))
        last = end
    parts.append(value[last:])
    return b"".join(parts) if isinstance(value, bytes) else "".join(parts)  # type: ignore[arg-type]


# A small alphabet makes shared runs (and blocks that occur without their window) common.
_ALPHABET = "ab-k_é"
_SECRET = st.text(alphabet=_ALPHABET, min_size=MIN_SECRET, max_size=40)


@st.composite
def _case(draw: st.DrawFn) -> tuple[str, list[str]]:
    secrets = draw(st.lists(_SECRET, min_size=1, max_size=3))
    if draw(st.booleans()):
        secrets.append("Bearer " + secrets[0])  # a header value holding a token also collected alone
    pieces = draw(
        st.lists(
            st.one_of(
                st.text(alphabet=_ALPHABET + " .", max_size=30),
                st.sampled_from(secrets).flatmap(
                    lambda s: st.tuples(st.integers(0, len(s)), st.integers(0, len(s))).map(
                        lambda ij: s[min(ij) : max(ij)]
                    )
                ),
            ),
            max_size=12,
        )
    )
    return "".join(pieces), secrets


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(_case())
def test_probed_scrub_matches_the_window_search(case: tuple[str, list[str]]) -> None:
    text, secrets = case
    assert scrub_fragments(text, secrets) == reference(text, secrets)
    raw = text.encode("utf-8")
    assert scrub_fragments(raw, secrets) == reference(raw, secrets)


def test_every_fragment_is_still_replaced() -> None:
    key = "sk-test-planted-fake-" + "0123456789abcdefghijklmnopqrstuvwxyz" * 4
    echoed = f"401: bad key {key[5:30]} (prefix {key[:12]}), tail …{key[-12:]}; short {key[40:51]}"
    out = scrub_fragments(echoed, {key, "Bearer " + key})
    assert key[5:30] not in out and key[:12] not in out and key[-12:] not in out
    assert key[40:51] in out  # 11 characters: below the fragment length, as before
    assert out == reference(echoed, {key, "Bearer " + key})
