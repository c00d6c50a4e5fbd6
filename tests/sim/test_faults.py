"""Fault injection: deterministic per (seed, content, attempt), at the configured rates."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import httpx
import pytest

from oracleproto.sim.faults import Fault, FaultConfig, FaultInjector
from oracleproto.sim.loopback import LoopbackRequest
from oracleproto.sim.server import SimConfig, SimHandler, Simulator

CONFIG = FaultConfig(fail_5xx=0.10, fail_429=0.05, fail_timeout=0.02, latency_ms=0.0)
N = 2000


def _outcomes(seed: int, config: FaultConfig) -> list[Fault]:
    injector = FaultInjector(config, seed, "chat")
    return [injector.decide(f"content-{i}").fault for i in range(N)]


def test_rates_match_the_configuration() -> None:
    counts = Counter(_outcomes(1, CONFIG))
    assert abs(counts[Fault.SERVER_5XX] / N - 0.10) < 0.03
    assert abs(counts[Fault.RATE_LIMIT] / N - 0.05) < 0.02
    assert abs(counts[Fault.TIMEOUT] / N - 0.02) < 0.012
    assert counts[Fault.NONE] > 0.8 * N


def test_decisions_are_deterministic_per_seed() -> None:
    assert _outcomes(1, CONFIG) == _outcomes(1, CONFIG)
    assert _outcomes(1, CONFIG) != _outcomes(2, CONFIG)


def test_a_retried_request_eventually_succeeds() -> None:
    injector = FaultInjector(FaultConfig(fail_5xx=0.5), 3, "chat")
    for i in range(50):
        attempts = [injector.decide(f"c{i}").fault for _ in range(12)]
        assert Fault.NONE in attempts


def test_latency_is_fixed_plus_bounded_jitter() -> None:
    injector = FaultInjector(FaultConfig(latency_ms=100, jitter_ms=50), 3, "search")
    delays = [injector.decide(f"c{i}").delay_s for i in range(200)]
    assert all(0.1 <= d < 0.15 for d in delays) and len(set(delays)) > 100


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fail_5xx": 1.5}, "fail_5xx must be a fraction in [0, 1], got 1.5"),
        ({"fail_5xx": 0.6, "fail_429": 0.6}, "must not exceed 1"),
        ({"latency_ms": -1}, "must be >= 0"),
    ],
)
def test_bad_knobs_are_rejected(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        FaultConfig(**kwargs)  # type: ignore[arg-type]


def _chat(handler: SimHandler, i: int) -> int:
    body = {"model": "sim/hasty", "messages": [{"role": "user", "content": f"hello {i}"}]}
    response = handler(
        LoopbackRequest(
            "POST", "/v1/chat/completions", {"authorization": "Bearer k"}, json.dumps(body).encode()
        )
    )
    return -1 if response.drop_connection else response.status


def test_handler_statuses_follow_the_rates_over_a_few_hundred_requests() -> None:
    handler = SimHandler(SimConfig(seed=9, chat=CONFIG))
    statuses = Counter(_chat(handler, i) for i in range(400))
    five = statuses[500] + statuses[502] + statuses[503]
    assert 20 <= five <= 60 and 8 <= statuses[429] <= 36 and 1 <= statuses[-1] <= 20
    again = SimHandler(SimConfig(seed=9, chat=CONFIG))
    assert Counter(_chat(again, i) for i in range(400)) == statuses


def test_faults_over_real_http() -> None:
    config = SimConfig(
        seed=1, chat=FaultConfig(fail_429=1.0, retry_after_s=7), search=FaultConfig(fail_timeout=1.0)
    )
    with Simulator(config) as sim:
        limited = httpx.post(
            sim.llm_base_url + "/chat/completions",
            json={"model": "sim/hasty", "messages": [{"role": "user", "content": "hi"}]},
            headers={"Authorization": "Bearer k"},
        )
        assert limited.status_code == 429 and limited.headers["retry-after"] == "7"
        assert limited.json()["error"]["code"] == "rate_limit_exceeded"
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.post(
                sim.search_base_url + "/search", json={"query": "x"}, headers={"Authorization": "Bearer k"}
            )


def test_hang_mode_outlasts_the_client_timeout() -> None:
    config = SimConfig(search=FaultConfig(fail_timeout=1.0, timeout_mode="hang", hang_s=1.0))
    with Simulator(config) as sim, pytest.raises(httpx.ReadTimeout):
        httpx.post(
            sim.search_base_url + "/search",
            json={"query": "x"},
            headers={"Authorization": "Bearer k"},
            timeout=0.2,
        )


def _post_chat(sim: Simulator, key: str = "k") -> httpx.Response:
    return httpx.post(
        sim.llm_base_url + "/chat/completions",
        json={"model": "sim/hasty", "messages": [{"role": "user", "content": "hi"}]},
        headers={"Authorization": f"Bearer {key}"},
    )


@pytest.mark.parametrize(
    ("knob", "errors", "message"),
    [
        ("fail_reset", (httpx.ReadError,), "reset"),
        # The RST may overtake the half body in the client's receive queue.
        ("fail_reset_mid_body", (httpx.ReadError, httpx.RemoteProtocolError), ""),
        ("fail_truncated", (httpx.RemoteProtocolError,), "without sending complete message body"),
    ],
)
def test_broken_connections_over_real_http(
    knob: str, errors: tuple[type[httpx.TransportError], ...], message: str
) -> None:
    faults = FaultConfig(**{knob: 1.0})  # type: ignore[arg-type]
    with Simulator(SimConfig(chat=faults, search=faults)) as sim:
        with pytest.raises(errors, match=message or None):
            _post_chat(sim)
        with pytest.raises(errors, match=message or None):
            httpx.post(
                sim.search_base_url + "/search", json={"query": "x"}, headers={"Authorization": "Bearer k"}
            )


def test_malformed_bodies_are_complete_200s_that_are_not_json() -> None:
    faults = FaultConfig(fail_malformed=1.0)
    with Simulator(SimConfig(chat=faults, search=faults)) as sim:
        chat = _post_chat(sim)
        search = httpx.post(
            sim.search_base_url + "/search", json={"query": "x"}, headers={"Authorization": "Bearer k"}
        )
    for response in (chat, search):
        assert response.status_code == 200 and response.content.startswith(b"{")
        with pytest.raises(json.JSONDecodeError):
            response.json()


def test_a_429_without_retry_after() -> None:
    with Simulator(SimConfig(chat=FaultConfig(fail_429=1.0, retry_after_s=None))) as sim:
        limited = _post_chat(sim)
    assert limited.status_code == 429 and "retry-after" not in limited.headers
    assert limited.json()["error"]["message"].endswith("Please try again later.")


def test_a_key_revoked_mid_run_answers_401_from_the_nth_request_on() -> None:
    with Simulator(SimConfig(chat=FaultConfig(revoked_keys=frozenset({"k"}), revoked_after=2))) as sim:
        statuses = [_post_chat(sim).status_code for _ in range(4)]
        other = _post_chat(sim, key="another-key").status_code
    assert statuses == [200, 200, 401, 401] and other == 200


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"fail_5xx": 0.5, "fail_malformed": 0.6}, "must not exceed 1"),
        ({"fail_truncated": -0.1}, "fail_truncated must be a fraction"),
        ({"revoked_after": -1}, "revoked_after must be >= 0"),
    ],
)
def test_new_knobs_are_validated(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FaultConfig(**kwargs)  # type: ignore[arg-type]


def test_new_fault_kinds_do_not_change_what_an_existing_configuration_injects() -> None:
    old = FaultConfig(fail_5xx=0.10, fail_429=0.05, fail_timeout=0.02)
    extended = replace(old, fail_reset=0.05, fail_malformed=0.05)
    before, after = _outcomes(4, old), _outcomes(4, extended)
    assert [b for b, a in zip(before, after, strict=True) if b is not Fault.NONE] == [
        a for b, a in zip(before, after, strict=True) if b is not Fault.NONE
    ]
    assert {Fault.RESET, Fault.MALFORMED} <= set(after)
