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
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.verify.attest import published_files
from oracleproto.verify.secret_plugins import find_credentials
from oracleproto.verify.secret_scan import scan_bytes

ROOT = Path(__file__).resolve().parents[2]
DEMO_RUN = ROOT / "cassettes" / "demo" / "20260101-000000-de00"


def _jwt() -> str:
    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    header, claims = part({"alg": "HS256", "typ": "JWT"}), part({"sub": "u-81", "iat": 1893456000})
    return f"{header}.{claims}.Zm9vYmFyYmF6cXV4cXV1eA"


#: (what a stranger's text may hold, the value that must be found, the kind named).
PLANTED = [
    ("aws_access_key_id = AKIAZ7QW3RT5YU2IO4PB", "AKIAZ7QW3RT5YU2IO4PB", "AWS Access Key"),
    (
        'aws_secret_access_key: "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"',
        "kT9v2Lq8Zr4Xw1Nb6Yc3Jm7Ps5Hd0Fg2Ae8Ui4Oq",
        "AWS Access Key",
    ),
    (
        "token ghp_R7t2Yq9Lm4Xc8Vb1Nz6Kp3Hd5Sw0Fj2Ga7Ue9",
        "ghp_R7t2Yq9Lm4Xc8Vb1Nz6Kp3Hd5Sw0Fj2Ga7Ue9",
        "GitHub Token",
    ),
    ("glpat-Xq8Rt3Lm9Vz2Nc7Kp4Yw", "glpat-Xq8Rt3Lm9Vz2Nc7Kp4Yw", "GitLab Token"),
    ("SLACK_BOT=xoxb-2048123456-4096789012-q8Rt3Lm9Vz2Nc7Kp4Yw1Hd5", "xoxb-2048123456", "Slack Token"),
    (
        "https://hooks.slack.com/services/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",
        "https://hooks.slack.com/services/T01AB2CD3",
        "Slack Token",
    ),
    ("stripe: sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "Stripe Access Key"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7", "BEGIN RSA PRIVATE KEY", "Private Key"),
    (f"Authorization was {_jwt()} in the page", _jwt(), "JSON Web Token"),
    (
        '"client_secret": "Q3p9-Zt7Lx2Vb8Nw4Kc6Ym1Rd5Hs0Fg"',
        "Q3p9-Zt7Lx2Vb8Nw4Kc6Ym1Rd5Hs0Fg",
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
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",  # AWS's documented example
        '"password": "hunter2"',  # short: a word, not a credential
        '"completion_tokens": 1234567890123456789012',
        '"api_key_fingerprint": "sk-o…a1b2c3d4e5f6"',  # our redacted form
        "the password_policy_description_text is long",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCD",  # sequential
        '"secret": "${AWS_SECRET_ACCESS_KEY}"',  # a template
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
        "inside a word: AAC1234567890abcdef1234567890abcdef",  # Twilio's shape, not at a boundary
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
    search.write_bytes(data[:at] + b"keys AKIAZ7QW3RT5YU2IO4PB and " + data[at:])  # in a result's title
    result = CliRunner().invoke(cli, ["bundle", "export", str(run), str(tmp_path / "b.tar.gz")])
    assert result.exit_code == 2, result.output
    offset = at + len(b"keys ")
    assert (
        f"run/{DEMO_RUN.name}/cassettes/search.yaml: byte offset {offset}: AWS Access Key (detect-secrets)"
        in (result.output)
    )
    assert "AKIAZ7QW3RT5YU2IO4PB" not in result.output
    assert not (tmp_path / "b.tar.gz").exists()


def test_the_detector_opens_no_socket_at_import_or_scan(tmp_path: Path) -> None:
    # A fresh interpreter whose every socket connect and name lookup fails loudly.
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n    raise SystemExit('network used: ' + repr(a[:2]))\n"
        "socket.socket.connect = refuse\nsocket.socket.connect_ex = refuse\nsocket.getaddrinfo = refuse\n"
        "socket.create_connection = refuse\n"
        "from oracleproto.verify.secret_plugins import find_credentials\n"
        "data = b'aws_access_key_id = AKIAZ7QW3RT5YU2IO4PB ghp_R7t2Yq9Lm4Xc8Vb1Nz6Kp3Hd5Sw0Fj2Ga7Ue9'\n"
        "print(len(find_credentials(data)))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_PROXY") and not k.endswith("_proxy")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"
