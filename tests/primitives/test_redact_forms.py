"""The secret scrub's coverage (issue 32): every key, its base64 and URL-encoded forms, echoed fragments.

Property tests with an oracle independent of the scrub's own patterns: after ``redact_entry`` no
field holds 12 consecutive characters of the key, neither as written, nor once URL-decoded, nor
once any base64-looking run in it is decoded at any alignment. Then the run scan that makes the
scrub fast is checked against the whole-text search it replaced, byte for byte.
"""

from __future__ import annotations

import base64
import binascii
import random
import re
from urllib.parse import quote, quote_plus, unquote, unquote_plus

from hypothesis import given, settings
from hypothesis import strategies as st

from oracleproto.primitives.redact import (
    MIN_FRAGMENT,
    REDACTED,
    _may_hold_a_secret,
    _plan,
    scrub_fragments,
    scrub_fragments_everywhere,
    secret_forms,
)
from oracleproto.transport.entry import Entry
from oracleproto.transport.scrub import collect_secrets, redact_entry

#: Characters of real keys (OpenAI ``sk-proj-…``, Tavily ``tvly-…``) plus the ones URL and base64
#: encodings treat specially, so the encoded forms differ from the key.
_KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.~"
#: Text around the key: spaces, JSON punctuation, non-ASCII, and key characters too (so runs of
#: key characters continue past the key's edges).
_FILLER = st.text(alphabet='ab xyz09{}":,é–😀+/=-_', max_size=40)
_B64_RUN = re.compile(r"[A-Za-z0-9+/=_-]{4,}")


def _has_fragment(text: bytes, key: bytes) -> bool:
    """True when ``text`` holds ``MIN_FRAGMENT`` consecutive bytes of ``key``."""
    return any(key[i : i + MIN_FRAGMENT] in text for i in range(len(key) - MIN_FRAGMENT + 1))


def _b64_decodings(text: str) -> list[bytes]:
    """Every base64-looking run of ``text`` decoded from each of its four starting offsets."""
    out: list[bytes] = []
    for run in _B64_RUN.findall(text):
        standard = run.replace("-", "+").replace("_", "/").replace("=", "")
        for offset in range(4):
            part = standard[offset:]
            part = part[: len(part) - len(part) % 4]
            try:
                out.append(base64.b64decode(part, validate=True))
            except (binascii.Error, ValueError):
                continue
    return out


def _leaks(text: str, key: str) -> list[str]:
    """How ``text`` still shows ``key`` (empty when it does not)."""
    raw = key.encode()
    found = []
    if _has_fragment(text.encode("utf-8", "surrogatepass"), raw):
        found.append("as written")
    for name, decode in (("URL-decoded", unquote), ("URL-decoded (plus)", unquote_plus)):
        if _has_fragment(decode(text).encode("utf-8", "surrogatepass"), raw):
            found.append(name)
    if any(_has_fragment(decoded, raw) for decoded in _b64_decodings(text)):
        found.append("base64-decoded")
    return found


@st.composite
def _exposures(draw: st.DrawFn) -> tuple[str, str]:
    """A key and a text echoing it in every way a provider, proxy or log line does."""
    key = draw(st.text(alphabet=_KEY_CHARS, min_size=MIN_FRAGMENT, max_size=164))
    pieces: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        pieces.append(draw(_FILLER))
        kind = draw(st.sampled_from(["whole", "fragment", "base64", "urlsafe", "quote", "quote_plus"]))
        if kind == "whole":
            pieces.append(key)
        elif kind == "fragment":
            start = draw(st.integers(0, len(key) - MIN_FRAGMENT))
            end = draw(st.integers(start + MIN_FRAGMENT, len(key)))
            pieces.append(key[start:end])
        elif kind in {"base64", "urlsafe"}:
            # The key inside a longer encoded text (``Basic`` credentials, a header dump): any alignment.
            around = draw(_FILLER).encode() + key.encode() + draw(_FILLER).encode()
            encode = base64.b64encode if kind == "base64" else base64.urlsafe_b64encode
            pieces.append(encode(around).decode())
        else:
            encoded = quote(key, safe="") if kind == "quote" else quote_plus(key, safe="")
            start = draw(st.integers(0, max(0, len(encoded) - MIN_FRAGMENT)))
            pieces.append(encoded[start:])
    pieces.append(draw(_FILLER))
    return key, "".join(pieces)


def _entry(text: str) -> Entry:
    return Entry(
        key="k" * 64,
        channel="llm",
        request_meta={},
        request_body=text,
        context=None,
        occurrence=None,
        method="POST",
        uri=f"https://h/v1/x?q={text}",
        request_headers={},
        status=401,
        reason=text,
        response_headers={"x-echo": [text]},
        body=text.encode("utf-8", "surrogatepass"),
        exception={"message": text},
        latency_ms=1,
        recorded_at="2026-01-01T00:00:00.000000+00:00",
    )


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(_exposures(), st.sampled_from(["Bearer", "Token"]))
def test_no_form_of_a_bearer_key_survives_in_any_field(case: tuple[str, str], scheme: str) -> None:
    key, text = case
    secrets = collect_secrets([("Authorization", f"{scheme} {key}")], "https://h/v1/x", b"")
    entry = redact_entry(_entry(text), secrets)
    fields = {
        "body": entry.body.decode("utf-8", "surrogatepass") if isinstance(entry.body, bytes) else "",
        "request_body": entry.request_body,
        "uri": entry.uri,
        "reason": entry.reason,
        "header": entry.response_headers["x-echo"][0],
        "exception": str(entry.exception),
    }
    for name, value in fields.items():
        assert not _leaks(value, key), (name, _leaks(value, key), value)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(_exposures())
def test_a_key_in_the_json_body_is_hunted_in_every_form(case: tuple[str, str]) -> None:
    # tavily-python sends its key as ``api_key`` in the JSON body, not in a header.
    key, text = case
    body = ('{"api_key": "' + key.replace("\\", "\\\\").replace('"', '\\"') + '", "query": "q"}').encode()
    entry = redact_entry(_entry(text), collect_secrets([], "https://h/search", body))
    assert isinstance(entry.body, bytes)
    assert not _leaks(entry.body.decode("utf-8", "surrogatepass"), key)


def test_a_164_character_project_key_in_every_form() -> None:
    key = "sk-proj-" + "Ab0_-Z9y" * 19 + "Qq1+/=z="[:4]
    assert len(key) == 164
    echoes = [
        key,
        key[40:52],  # 12 characters: the documented minimum
        base64.b64encode(f"Authorization: Bearer {key}".encode()).decode(),
        base64.b64encode(f"x{key}".encode()).decode(),
        base64.urlsafe_b64encode(f"xy{key}".encode()).decode(),
        quote(key, safe=""),
        quote_plus(key, safe=""),
    ]
    text = " | ".join(echoes)
    scrubbed = redact_entry(
        _entry(text), collect_secrets([("Authorization", f"Bearer {key}")], "https://h", b"")
    )
    assert isinstance(scrubbed.body, bytes)
    out = scrubbed.body.decode()
    assert not _leaks(out, key)
    assert out.count(REDACTED) >= len(echoes)
    assert key[40:51] in scrub_fragments(key[40:51], secret_forms(key))  # 11 characters stay


def test_secret_forms_lists_raw_url_and_base64_forms() -> None:
    key = "tvly-dev-ab+cd/ef=gh12"
    forms = secret_forms(key)
    assert key in forms and quote(key, safe="") in forms and quote_plus(key, safe="") in forms
    raw = key.encode()
    for offset in range(3):
        part = raw[offset:]
        part = part[: len(part) - len(part) % 3]
        assert base64.b64encode(part).decode() in forms
        assert base64.urlsafe_b64encode(part).decode() in forms
    assert all(len(f) >= 8 for f in forms)
    assert secret_forms("short12") == set()  # below MIN_SECRET: not hunted at all


# Texts for the equivalence check: key characters, other ASCII, non-ASCII, a lone surrogate.
_TEXT_CHARS = 'abAB01-_+/= \n.,:{}"é–😀\ud800'


@st.composite
def _scan_case(draw: st.DrawFn) -> tuple[str, list[str]]:
    secrets = draw(st.lists(st.text(alphabet="abAB01-_+/=", min_size=8, max_size=40), min_size=1, max_size=4))
    pieces = draw(
        st.lists(
            st.one_of(
                st.text(alphabet=_TEXT_CHARS, max_size=30),
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


def _same_as_whole_text_search(text: str, secrets: list[str]) -> None:
    """The run scan replaces exactly what the whole-text search does, in the text and in its bytes."""
    assert scrub_fragments(text, secrets) == scrub_fragments_everywhere(text, secrets)
    raw = text.encode("utf-8", "surrogatepass")
    assert scrub_fragments(raw, secrets) == scrub_fragments_everywhere(raw, secrets)


def _random_key(rng: random.Random, length: int) -> str:
    """A key drawn character by character, as real keys are: hypothesis's own text strategy favours
    repeated characters, whose probe blocks all coincide."""
    return "".join(rng.choices("abcdefABCDEF012345-_", k=length))


def _cut(rng: random.Random, secrets: list[str], shortest: int, longest: int) -> str:
    """A piece of one of ``secrets``, ``shortest`` to ``longest`` characters from anywhere in it (drawn
    uniformly: hypothesis's integers favour the ends of a range, and so the same few cuts)."""
    secret = rng.choice(secrets)
    start = rng.randrange(len(secret))
    return secret[start : start + rng.randint(shortest, longest)]


@settings(max_examples=600, deadline=None, derandomize=True, database=None)
@given(_scan_case())
def test_the_run_scan_replaces_exactly_what_the_whole_text_search_does(case: tuple[str, list[str]]) -> None:
    _same_as_whole_text_search(*case)


@st.composite
def _short_run_case(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Keys (short ones searched whole, long ones by blocks) and a text of short runs cut from them
    (6–24 characters: a probe block, a window, a whole short key, or neither) between separators,
    so runs take the one-pass slice test and some pass it."""
    # A short key (searched whole) beside long ones, whose blocks outnumber a short run's slices.
    lengths = [draw(st.integers(8, 11)), *draw(st.lists(st.integers(12, 170), min_size=1, max_size=2))]
    rng = random.Random(draw(st.integers(0, 2**32)))
    keys = [_random_key(rng, n) for n in lengths]
    pick = st.sampled_from(["cut", "short key", "other"])
    runs = [
        {
            "cut": lambda: _cut(rng, keys, 6, 24),
            "short key": lambda: keys[0],
            "other": lambda: draw(st.text(alphabet="abcAB01-_", max_size=24)),
        }[draw(pick)]()
        for _ in range(draw(st.integers(0, 10)))
    ]
    separators = draw(
        st.lists(st.sampled_from([" ", '", "', "\n", ".", "é"]), min_size=len(runs), max_size=len(runs))
    )
    return "".join(r + sep for r, sep in zip(runs, separators, strict=True)), keys


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(_short_run_case())
def test_short_runs_skipped_by_the_slice_test_hold_nothing_to_replace(case: tuple[str, list[str]]) -> None:
    _same_as_whole_text_search(*case)


@st.composite
def _spaced_case(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Secrets holding whitespace (``Bearer <token>``, a word list) and a text of pieces cut from
    them across the whitespace, so the windows behind each gate are found or missed in turn."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    token = _random_key(rng, draw(st.integers(8, 60)))
    scheme = draw(st.sampled_from(["Bearer", "Basic", "Token", "x"]))
    words = " ".join("".join(rng.choices("abcdef01", k=rng.randint(1, 9))) for _ in range(rng.randint(2, 6)))
    secrets = [f"{scheme} {token}", token, words]
    pieces = [
        _cut(rng, secrets, 1, 30) if draw(st.booleans()) else draw(st.sampled_from([" ", "\n", "x", '"']))
        for _ in range(draw(st.integers(0, 12)))
    ]
    return "".join(pieces), secrets


@settings(max_examples=500, deadline=None, derandomize=True, database=None)
@given(_spaced_case())
def test_windows_across_whitespace_behind_gates_are_all_found(case: tuple[str, list[str]]) -> None:
    _same_as_whole_text_search(*case)


def test_a_bearer_keys_windows_across_the_space_share_one_gate() -> None:
    key = "sk-proj-" + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 3
    (gate, groups), *others = _plan(frozenset({f"Bearer {key}"})).spanning
    assert not others and gate == b" sk-pr" and len(groups) == 2
    assert scrub_fragments(f"x earer {key[:6]}x", [f"Bearer {key}"]) == f"x {REDACTED}x"


def test_the_slice_test_passes_a_run_holding_a_block_and_skips_one_without() -> None:
    key = "sk-proj-" + "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" * 2
    plan = _plan(frozenset({key}))
    assert plan.probe_count > 8  # more blocks than a 13-byte run has slices: the one-pass test
    assert not _may_hold_a_secret(b"prompt_tokens", plan)
    assert _may_hold_a_secret(key[7:20].encode(), plan)  # holds the block at 14 (stride 7)
    assert scrub_fragments(f'"prompt_tokens" {key[7:20]}', [key]) == f'"prompt_tokens" {REDACTED}'


def test_a_non_ascii_secret_takes_the_whole_text_search() -> None:
    secret = "clé-secrète-0123456789"
    text = f"echo {secret[2:16]} and {secret}"
    assert scrub_fragments(text, [secret]) == scrub_fragments_everywhere(text, [secret])
    assert secret[2:16] not in scrub_fragments(text, [secret])


def test_runs_of_key_characters_are_scanned_past_a_short_run() -> None:
    # A run of key characters shorter than a window is skipped; the next one is still found.
    key = "ABCDEFGHIJKLMNOP"
    text = f"ABC {key[:5]} x {key[2:14]}"
    assert scrub_fragments(text, [key]) == f"ABC {key[:5]} x {REDACTED}"
    assert scrub_fragments(text.encode(), [key]) == f"ABC {key[:5]} x {REDACTED}".encode()


def test_secret_forms_are_exactly_these() -> None:
    # Written out independently of the code: every reserved character escaped, a space as %20
    # (quote) and + (quote_plus); base64 of the 12 bytes of whole 3-byte groups at offsets 0, 1, 2
    # (standard = URL-safe here: no + or / in them); offset 3 would repeat offset 0's tail.
    assert secret_forms("ab/cd+ef gh=ij") == {
        "ab/cd+ef gh=ij",
        "ab%2Fcd%2Bef%20gh%3Dij",
        "ab%2Fcd%2Bef+gh%3Dij",
        "YWIvY2QrZWYgZ2g9",
        "Yi9jZCtlZiBnaD1p",
        "L2NkK2VmIGdoPWlq",
    }
    # 8 characters, the shortest hunted: offsets 0, 1, 2 each leave two whole groups (8 characters).
    assert secret_forms("12345678") == {"12345678", "MTIzNDU2", "MjM0NTY3", "MzQ1Njc4"}
    assert secret_forms("1234567") == set()


def test_a_secret_with_an_undecodable_byte_has_its_forms_too() -> None:
    # os.environ holds a byte that is not UTF-8 as a lone surrogate (surrogateescape).
    secret = "ab/c?d_e\udc80fgh"
    assert secret_forms(secret) == {
        secret,
        "ab%2Fc%3Fd_e%ED%B2%80fgh",
        "YWIvYz9kX2XtsoBm",
        "Yi9jP2RfZe2ygGZn",
        "L2M/ZF9l7bKAZmdo",
        "L2M_ZF9l7bKAZmdo",
    }
