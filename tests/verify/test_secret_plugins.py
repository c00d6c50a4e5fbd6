"""Other services' credentials at the export gate (detect-secrets' plugins), and no false alarms.

Every credential below is made up for the test, in the shape of the real ones (none is valid).
Each must be found at its byte offset, named by kind, without its value in the message; the demo
run, a fresh simulator run's shapes (digests, ids, UUIDs) and documented example keys must pass.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

from oracleproto.cli.main import cli
from oracleproto.verify.attest import published_files
from oracleproto.verify.secret_plugins import (
    GENERIC_MIN_ENTROPY,
    GENERIC_MIN_LENGTH,
    Finding,
    _occurrences,
    _regions,
    find_credentials,
)
from oracleproto.verify.secret_scan import scan_bytes

ROOT = Path(__file__).resolve().parents[2]
DEMO_RUN = ROOT / "cassettes" / "demo" / "20260101-000000-de00"


#: Credential-shaped values, put together here so that no line of the repository holds one whole
#: (the shapes are what the plugins look for; the values are made up).
_AWS_KEY = b"AKIA" + b"Z7QW3RT5YU2IO4PB"
_AWS_EXAMPLE_KEY = b"AKIA" + b"IOSFODNN7EXAMPLE"  # AWS's documented example
_AWS_SECRET = b"kT9v2Lq8Zr4Xw1Nb6Yc3" + b"Jm7Ps5Hd0Fg2Ae8Ui4Oq"
#: AWS's 40-character secret-key shape and Twilio's "AC" + 32 at once.
_AWS_SECRET_TWILIO_SHAPED = b"AC" + b"q8r3l9v2n7k4w1h5s0f2" + b"g7a8e9u4o3m6XyZ12P"
_GITHUB_TOKEN = b"ghp_" + b"R7t2Yq9Lm4Xc8Vb1Nz6K" + b"p3Hd5Sw0Fj2Ga7Ue9"
_GITLAB_TOKEN = b"glpat-" + b"Xq8Rt3Lm9Vz2Nc7Kp4Yw"
_SLACK_TOKEN = b"xoxb-" + b"2048123456-4096789012-q8Rt3Lm9Vz2Nc7Kp4Yw1Hd5"
_SLACK_WEBHOOK = (
    b"https://hooks.slack.com/services/" + b"T01AB2CD3/B04EF5GH6/" + b"q8Rt3Lm9Vz2N" + b"c7Kp4Yw1Hd5S"
)
_STRIPE_KEY = b"sk_live_" + b"4eC39HqLyjWDarjtT1zdp7dc"
_PRIVATE_KEY_BEGIN = b"BEGIN RSA PRIV" + b"ATE KEY"
_NPM_TOKEN = b"npm_" + b"Xq8Rt3Lm9Vz2Nc7Kp4Yw" + b"1Hd5Sw0Fj2Ga7Ue"
_CLIENT_SECRET = b"Q3p9-Zt7Lx2Vb8" + b"Nw4Kc6Ym1Rd5Hs0Fg"


def _jwt() -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    header, claims = part({"alg": "HS256", "typ": "JWT"}), part({"sub": "u-81", "iat": 1893456000})
    return f"{header}.{claims}.Zm9vYmFyYmF6cXV4cXV1eA"


#: (what a stranger's text may hold, the value that must be found, the kind named).
PLANTED = [
    (f"aws_access_key_id = {_AWS_KEY.decode()}", _AWS_KEY.decode(), "AWS Access Key"),
    (f'aws_secret_access_key: "{_AWS_SECRET.decode()}"', _AWS_SECRET.decode(), "AWS Access Key"),
    (f"token {_GITHUB_TOKEN.decode()}", _GITHUB_TOKEN.decode(), "GitHub Token"),
    (_GITLAB_TOKEN.decode(), _GITLAB_TOKEN.decode(), "GitLab Token"),
    (f"SLACK_BOT={_SLACK_TOKEN.decode()}", "xoxb-" + "2048123456", "Slack Token"),
    (_SLACK_WEBHOOK.decode(), "https://hooks.slack.com/services/" + "T01AB2CD3", "Slack Token"),
    (f"stripe: {_STRIPE_KEY.decode()}", _STRIPE_KEY.decode(), "Stripe Access Key"),
    (
        f"-----{_PRIVATE_KEY_BEGIN.decode()}-----\nMIIEpAIBAAKCAQEA7",
        _PRIVATE_KEY_BEGIN.decode(),
        "Private Key",
    ),
    (f"Authorization was {_jwt()} in the page", _jwt(), "JSON Web Token"),
    (
        f'"client_secret": "{_CLIENT_SECRET.decode()}"',
        _CLIENT_SECRET.decode(),
        "high-entropy value of a credential-named key",
    ),
]


@pytest.mark.parametrize(("text", "value", "kind"), PLANTED, ids=[k for _, _, k in PLANTED])
def test_a_planted_credential_is_found_at_its_offset_by_kind(text: str, value: str, kind: str) -> None:
    # Inside a cassette-like body, as a search result or model output carries it.
    data = ("interactions:\n- response:\n    body: 'page text: " + text + " more text'\n").encode()
    hits = scan_bytes(data, "cassettes/search.yaml")
    assert hits, "not found"
    assert any(kind in h.kind and data[h.offset :].startswith(value.encode()) for h in hits), hits
    for hit in hits:
        assert value not in str(hit) and str(hit).startswith("cassettes/search.yaml: byte offset ")


@pytest.mark.parametrize(
    "text",
    [
        "key: 9f2c4e7a1b3d5f6e8a0c2e4f6a8b0d1e3f5a7c9e1b3d5f7a9c1e3f5a7b9d1e3f",  # a cassette key
        '"token_hash": "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"',  # a digest
        '"session_id": "3f2b8c1e-9a4d-4e6f-b2c8-7d1e5a9f3c2b"',  # a UUID
        '"access_token": "123e4567-e89b-12d3-a456-426614174000"',
        f"aws_access_key_id = {_AWS_EXAMPLE_KEY.decode()}",  # AWS's documented example
        '"password": "hunter2"',  # short: a word, not a credential
        '"completion_tokens": 1234567890123456789012',
        '"api_key_fingerprint": "sk-o…a1b2c3d4e5f6"',  # our redacted form
        "the password_policy_description_text is long",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCD",  # sequential
        '"secret": "${AWS_SECRET_ACCESS_KEY}"',  # a template
        # A JWT's shape inside a base64 run.
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAE" + "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxIn0.sig",
        "inside a word: AAC1234567890abcdef" + "1234567890abcdef",  # Twilio's shape, not at a boundary
    ],
)
def test_digests_ids_examples_and_words_are_not_credentials(text: str) -> None:
    assert find_credentials(text.encode()) == []


def test_the_demo_run_holds_no_credential_by_any_plugin() -> None:
    hits = [h for rel in published_files(DEMO_RUN) for h in scan_bytes((DEMO_RUN / rel).read_bytes(), rel)]
    assert hits == []


def test_export_refuses_a_bundle_with_someone_elses_cloud_key(tmp_path: Path) -> None:
    run = tmp_path / "runs" / DEMO_RUN.name
    shutil.copytree(DEMO_RUN, run)
    search = run / "cassettes" / "search.yaml"
    data = search.read_bytes()
    at = data.index(b'"results": [{"title": "') + len(b'"results": [{"title": "')
    search.write_bytes(data[:at] + b"keys " + _AWS_KEY + b" and " + data[at:])  # in a result's title
    result = CliRunner().invoke(cli, ["bundle", "export", str(run), str(tmp_path / "b.tar.gz")])
    assert result.exit_code == 2, result.output
    offset = at + len(b"keys ")
    assert (
        f"run/{DEMO_RUN.name}/cassettes/search.yaml: byte offset {offset}: AWS Access Key (detect-secrets)"
        in (result.output)
    )
    assert _AWS_KEY.decode() not in result.output
    assert not (tmp_path / "b.tar.gz").exists()


def test_the_detector_opens_no_socket_at_import_or_scan(tmp_path: Path) -> None:
    # A fresh interpreter whose every socket connect and name lookup fails loudly.
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n    raise SystemExit('network used: ' + repr(a[:2]))\n"
        "socket.socket.connect = refuse\nsocket.socket.connect_ex = refuse\nsocket.getaddrinfo = refuse\n"
        "socket.create_connection = refuse\n"
        "from oracleproto.verify.secret_plugins import find_credentials\n"
        f"data = {b'aws_access_key_id = ' + _AWS_KEY + b' ' + _GITHUB_TOKEN!r}\n"
        "print(len(find_credentials(data)))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROXY") and not k.endswith("_proxy")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


AWS = "AWS Access Key (detect-secrets)"
GENERIC = "high-entropy value of a credential-named key"


def test_a_key_is_found_at_offset_0_and_at_1_only_after_a_non_word_byte() -> None:
    # Offset 0 has no byte before it: it is a boundary. At offset 1 the byte before decides.
    assert find_credentials(_AWS_KEY) == [Finding(0, AWS)]
    assert find_credentials(b"(" + _AWS_KEY) == [Finding(1, AWS)]
    assert find_credentials(b"x" + _AWS_KEY) == []


def test_an_anchored_shape_at_offset_0_is_found() -> None:
    # Slack's regex runs in a window from each "xox"; the window of one at offset 0 starts at 0.
    assert find_credentials(_SLACK_TOKEN) == [Finding(0, "Slack Token (detect-secrets)")]


def test_occurrences_are_every_start_in_order_overlapping_ones_included() -> None:
    assert list(_occurrences("xaaaxaa", "aa")) == [1, 2, 5]
    assert list(_occurrences("xaaaxaa", "b")) == []


def test_regions_of_no_anchor_are_the_whole_text() -> None:
    assert list(_regions("abcde", "abcde", None)) == [(0, 5)]


def test_regions_merge_overlapping_and_adjacent_windows_and_clamp_to_the_text() -> None:
    # "ab" at 0, 4, 6, 12 and 17; one byte before and one after each: windows (0 clamped from -1, 3),
    # (3, 7), (5, 9), (11, 15), (16, 19 clamped from 20). (3, 7) touches (0, 3) and (5, 9) overlaps
    # it: one region (0, 9). (11, 15) and (16, 19) have a byte between them: separate.
    text = "ab..abab....ab...ab"
    assert list(_regions(text, text, ("ab", 1, 1))) == [(0, 9), (11, 15), (16, 19)]


def test_a_slack_token_is_judged_within_its_window_not_by_text_beyond_it() -> None:
    # The window is 3 + 400 bytes from "xox": the value judged is bytes 0-402, all "a" after
    # "xoxb-1-"; "dummy" (a placeholder word) starts at 403, outside it, and cannot excuse it.
    data = b"xoxb-1-" + b"a" * 396 + b"dummy"
    assert find_credentials(data) == [Finding(0, "Slack Token (detect-secrets)")]


def test_an_npm_token_is_found_where_its_authtoken_literal_is() -> None:
    # "//registry.npmjs.org/:_authToken=" is 33 bytes: the token (the regex's group) starts at 33.
    # The generic rule also sees "Token=" there; the provider's kind wins at that offset.
    data = b"//registry.npmjs.org/:_authToken=" + _NPM_TOKEN
    assert find_credentials(data) == [Finding(33, "NPM tokens (detect-secrets)")]


def test_a_jwt_after_one_that_does_not_decode_is_still_found() -> None:
    # "eyJhYmM" is base64 of '{"abc': not JSON, so the first is no JWT; the second starts at 20.
    data = f"eyJhYmM.eyJhYmM and {_jwt()}".encode()
    assert find_credentials(data) == [Finding(20, "JSON Web Token (detect-secrets)")]


def test_sequential_and_uuid_bearing_values_are_fake_and_a_near_miss_is_not() -> None:
    # Values at byte 11 after '"secret": "'. The alphabet is a sequential string; the second holds a
    # UUID (8-4-4-4-12 hex) after a non-hex prefix, so it is not hex-only and reaches the heuristics.
    assert find_credentials(b'"secret": "ABCDEFGHIJKLMNOPQRSTUVWXYZ"') == []
    assert find_credentials(b'"secret": "vault-3f2b8c1e-9a4d-4e6f-b2c8-7d1e5a9f3c2b"') == []
    # One hex digit fewer at the end: no UUID any more, and the value is found.
    assert find_credentials(b'"secret": "vault-3f2b8c1e-9a4d-4e6f-b2c8-7d1e5a9f3c2"') == [
        Finding(11, GENERIC)
    ]


def test_a_generic_value_of_exactly_the_minimum_length_is_found_and_a_final_dot_is_not_counted() -> None:
    # 20 distinct characters (entropy log2(20) = 4.32), the last an "X": found at byte 11.
    value = "q8Rt3Lm9Vz2Nc7Kp4YwX"
    assert len(value) == GENERIC_MIN_LENGTH
    assert find_credentials(f'"secret": "{value}"'.encode()) == [Finding(11, GENERIC)]
    # The same 19 first characters ending a sentence: the full stop is not part of the value,
    # which is then one character short.
    assert find_credentials(b'"secret": "q8Rt3Lm9Vz2Nc7Kp4Yw."') == []


def test_a_generic_value_of_entropy_exactly_the_minimum_is_found() -> None:
    # 512 characters: "a" 4 times, "b" 9 times, ... "w" 32 times (the order detect-secrets sums its
    # terms in), then 15 "~" (outside its base64 alphabet: counted in the length only). Its entropy
    # as detect-secrets computes it in floating point is exactly 3.8: the counts come from a search
    # for such a set (the sum's rounding depends on them and on their order). The precondition below
    # states it, so a platform whose log() rounds differently fails there, visibly.
    counts = (4, 9, 13, 33, 7, 5, 1, 1, 71, 32, 29, 67, 4, 73, 15, 7, 8, 4, 8, 15, 32, 27, 32)
    value = "".join(ch * k for ch, k in zip(string.ascii_lowercase[:23], counts, strict=True)) + "~" * 15
    assert len(value) == 512
    assert Base64HighEntropyString().calculate_shannon_entropy(value) == GENERIC_MIN_ENTROPY
    assert find_credentials(f'"secret": "{value}"'.encode()) == [Finding(11, GENERIC)]


def test_a_value_a_provider_names_gets_no_second_generic_finding() -> None:
    # "aws_secret_access_key" (21) + ': "' (3): AWS's secret-key regex and the generic rule
    # ("secret", "access") both see the value at 24; only AWS's kind is reported.
    data = b'aws_secret_access_key: "' + _AWS_SECRET + b'"'
    assert find_credentials(data) == [Finding(24, AWS)]


def test_a_skipped_generic_candidate_does_not_end_the_search() -> None:
    # The first "secret" holds a hex digest (skipped); the second one's value starts at
    # 16 + 64 + 3 + 11 = 94.
    digest = "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
    data = f'"secret_hash": "{digest}", "secret": "q8Rt3Lm9Vz2Nc7Kp4YwX"'.encode()
    assert find_credentials(data) == [Finding(94, GENERIC)]


def test_findings_are_sorted_by_offset_then_kind_two_kinds_at_one_offset() -> None:
    # A GitHub token at 0 ("ghp_" and 37 characters, then a space: 42 bytes), then
    # 'aws_secret_key = "' (18 bytes): the value at 60 is both AWS's 40-character secret key and
    # Twilio's "AC" + 32 shape.
    data = _GITHUB_TOKEN + b' aws_secret_key = "' + _AWS_SECRET_TWILIO_SHAPED + b'"'
    assert find_credentials(data) == [
        Finding(0, "GitHub Token (detect-secrets)"),
        Finding(60, AWS),
        Finding(60, "Twilio API Key (detect-secrets)"),
    ]
