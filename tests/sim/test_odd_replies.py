"""The simulator's odd replies (issue 28 §5): impossible usage, a gzip bomb, a dripped body."""

from __future__ import annotations

import json
import math
import zlib

import httpx
import pytest

from oracleproto.sim.faults import FaultConfig, odd_delivery, odd_usage
from oracleproto.sim.loopback import LoopbackResponse, LoopbackServer
from oracleproto.sim.server import SimConfig, Simulator

PAYLOAD = {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}


def test_odd_usage_reports_impossible_numbers() -> None:
    assert odd_usage(FaultConfig(), PAYLOAD) is PAYLOAD
    assert odd_usage(FaultConfig(odd_usage="huge"), PAYLOAD)["usage"]["prompt_tokens"] == 10**30
    nan = odd_usage(FaultConfig(odd_usage="nan"), PAYLOAD)["usage"]
    assert all(math.isnan(nan[k]) for k in ("prompt_tokens", "completion_tokens", "total_tokens", "cost"))
    assert "Infinity" in json.dumps(odd_usage(FaultConfig(odd_usage="infinity"), PAYLOAD))
    assert PAYLOAD["usage"]["prompt_tokens"] == 3  # the answer itself is not changed in place


def test_a_gzip_bomb_is_small_on_the_wire_and_valid_json_once_decoded() -> None:
    response = odd_delivery(FaultConfig(gzip_bomb_mib=8), LoopbackResponse(body=b'{"ok": 1}'))
    assert response.headers["Content-Encoding"] == "gzip" and len(response.body) < 20_000
    decoded = zlib.decompress(response.body, 16 + zlib.MAX_WBITS)
    assert len(decoded) == 8 * 2**20 + 9 and json.loads(decoded) == {"ok": 1}


@pytest.mark.parametrize("knobs", [{"gzip_bomb_mib": -1}, {"drip_s": -0.5}, {"odd_usage": "negative"}])
def test_bad_knobs_are_refused(knobs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"gzip_bomb_mib|odd_usage"):
        FaultConfig(**knobs)  # type: ignore[arg-type]


def test_a_dripped_answer_arrives_whole_when_the_client_waits() -> None:
    dripped = odd_delivery(FaultConfig(drip_s=0.001), LoopbackResponse(body=b'{"ok": 1}'))
    with LoopbackServer(lambda _: dripped) as server:
        reply = httpx.get(server.base_url, timeout=30)
    assert reply.status_code == 200 and reply.json() == {"ok": 1}


def test_without_a_model_list_the_models_path_is_404() -> None:
    with Simulator(SimConfig(list_models=False)) as sim:
        reply = httpx.get(sim.base_url + "/v1/models", headers={"Authorization": "Bearer k"})
    assert reply.status_code == 404
