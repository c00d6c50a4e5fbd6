"""The loopback server speaks real HTTP to a real httpx client."""

from __future__ import annotations

import httpx
import pytest

from oracleproto.sim.loopback import LoopbackRequest, LoopbackResponse, LoopbackServer


def echo(request: LoopbackRequest) -> LoopbackResponse:
    if request.path == "/drop":
        return LoopbackResponse(drop_connection=True)
    return LoopbackResponse(status=201, body=request.method.encode() + b" " + request.body)


def test_round_trip_over_loopback() -> None:
    with LoopbackServer(echo) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        response = httpx.post(server.base_url + "/x", content=b"hello")
    assert response.status_code == 201 and response.content == b"POST hello"


async def test_dropped_connection_is_a_transport_error() -> None:
    with LoopbackServer(echo) as server:
        async with httpx.AsyncClient() as client:
            with pytest.raises(httpx.RemoteProtocolError):
                await client.get(server.base_url + "/drop")
