"""Secret scrubbing in the transport: URL credentials, Basic auth, echoed key fragments."""

from __future__ import annotations

import base64
from pathlib import Path

import httpx
import pytest

from oracleproto.context import CallContext, call_context
from oracleproto.transport.keys import canonical_request, entry_key
from oracleproto.transport.scrub import collect_secrets, public_uri
from tests.transport.helpers import CHAT_PATH, chat_body, make_rr

#: Put together from parts, so that no line of the repository holds a key-shaped value whole.
KEY = "sk-or-v1-" + "ECHOEDkey0123456789abcdefghijklmnop"
PASSWORD = "URLpassword-0123456789"


def test_collect_secrets_reads_userinfo_basic_auth_and_credential_params() -> None:
    basic = base64.b64encode(f"proxy-user:{PASSWORD}".encode()).decode()
    found = collect_secrets(
        [("Authorization", f"Basic {basic}")],
        f"http://proxy-user:{PASSWORD}@h/v1?x-api-key=QUERYKEY-0123&model=m",
        b"",
    )
    assert {basic, PASSWORD, f"proxy-user:{PASSWORD}", "QUERYKEY-0123", "proxy-user"} <= found
    assert "m" not in found


def test_public_uri_redacts_userinfo_and_credential_params() -> None:
    url = f"http://u:{PASSWORD}@[::1]:8080/v1/chat/completions?api_key=Q&api-version=2"
    assert (
        public_uri(url) == "http://[REDACTED]@[::1]:8080/v1/chat/completions?api_key=[REDACTED]&api-version=2"
    )


@pytest.mark.parametrize(
    "url",
    [
        f"http://u:{PASSWORD}@127.0.0.1:9/v1/chat/completions",
        "http://127.0.0.1:9/v1/chat/completions?api_key=Q&token=T",
        "http://[REDACTED]@127.0.0.1:9/v1/chat/completions?api_key=[REDACTED]",  # a replayed snapshot URL
    ],
)
def test_credentials_in_a_url_never_change_the_key(url: str) -> None:
    url = str(httpx.URL(url))  # as the transport receives it (httpx percent-encodes the userinfo)
    body = b'{"model": "m", "messages": [], "temperature": 0}'
    plain = canonical_request("llm", "POST", "http://127.0.0.1:9/v1/chat/completions", body)
    assert canonical_request("llm", "POST", url, body) == plain
    assert entry_key(canonical_request("llm", "POST", url, body), None, None) == entry_key(plain, None, None)


async def test_echoed_fragments_leave_headers_bodies_and_exception_messages(tmp_path: Path) -> None:
    def provider(request: httpx.Request) -> httpx.Response:
        if b"boom" in request.content:
            raise httpx.ConnectError(f"cannot reach {request.url}: key {KEY[:20]}… rejected", request=request)
        return httpx.Response(
            200,
            headers={"x-echo-key-prefix": KEY[:24], "x-request-id": "req-1"},
            content=chat_body(f"your key ends in {KEY[-15:]}"),
        )

    rr = make_rr(tmp_path / "cassettes", "record", inner=httpx.MockTransport(provider))
    url = f"http://127.0.0.1:9{CHAT_PATH}?token={PASSWORD}"
    auth = {"Authorization": f"Bearer {KEY}"}
    async with httpx.AsyncClient(transport=rr.transport("llm")) as client:
        with call_context(CallContext("m", "q", 0)):
            ok = await client.post(url, json={"model": "m", "messages": ["a"]}, headers=auth)
            with pytest.raises(httpx.ConnectError) as info:
                await client.post(url, json={"model": "m", "messages": ["boom"]}, headers=auth)
    await rr.aclose()
    # What the caller sees is the stored (scrubbed) entry, so record and replay agree.
    assert ok.headers["x-echo-key-prefix"] == "[REDACTED]" and ok.headers["x-request-id"] == "req-1"
    assert "your key ends in [REDACTED]" in ok.text
    assert "[REDACTED]" in str(info.value)
    written = b"".join(p.read_bytes() for p in (tmp_path / "cassettes").rglob("*") if p.is_file())
    for secret in (KEY, PASSWORD):
        for i in range(len(secret) - 11):
            assert secret[i : i + 12].encode() not in written, (secret[:4], i)
            assert secret[i : i + 12] not in str(info.value), (secret[:4], i)
