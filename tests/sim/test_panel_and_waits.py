"""Paper-sized simulated panels (persona replicas) and 429s with a varying ``Retry-After`` (issue 32)."""

from __future__ import annotations

import httpx
import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.sim.faults import Fault, FaultConfig, FaultInjector
from oracleproto.sim.harness import MAX_SIM_MODELS, SIM_MODELS, sim_models
from oracleproto.sim.models_api import model_ids
from oracleproto.sim.personas import PERSONAS, persona_for_model
from oracleproto.sim.server import SimConfig, Simulator


def test_thirty_models_are_the_personas_then_their_replicas_round_by_round() -> None:
    models = sim_models(30)
    assert MAX_SIM_MODELS == 30 and len({slug for slug, _ in models}) == 30
    assert models[:6] == list(SIM_MODELS)
    assert models[6] == ("sim/careful-r2", "2026-01") and models[7] == ("sim/hasty-r2", "2025-12-15")
    assert models[-1] == ("sim/random-r5", "2026-02-10")
    assert sim_models(7)[-1] == ("sim/careful-r2", "2026-01")
    with pytest.raises(ValueError, match="between 1 and 30, got 31"):
        sim_models(31)


@pytest.mark.parametrize(
    ("slug", "persona"),
    [
        ("sim/careful-r2", "careful"),
        ("sim/persona-hasty-r5", "hasty"),
        ("sim/random-r5", "random"),
        ("sim/careful-r1", None),  # the persona itself is the first replica
        ("sim/careful-r6", None),
        ("sim/careful-r", None),
        ("sim/careful-r٣", None),  # a non-ASCII digit
        ("sim/nobody-r2", None),
        ("other/careful-r2", None),
    ],
)
def test_a_replica_forecasts_as_its_persona(slug: str, persona: str | None) -> None:
    found = persona_for_model(slug)
    assert (found.name if found else None) == persona
    if persona is not None:
        assert found is PERSONAS[persona]


def test_replicas_are_listed_only_by_a_simulator_asked_to() -> None:
    assert len(model_ids()) == 7 and "sim/careful-r2" not in model_ids()
    assert len(model_ids(replicas=True)) == 31
    auth = {"Authorization": "Bearer k"}
    with Simulator(SimConfig(replicas=True)) as sim:
        listed = httpx.get(sim.llm_base_url + "/models", headers=auth).json()["data"]
        one = httpx.get(sim.llm_base_url + "/models/sim%2Fgreedy-r4", headers=auth)
    assert len(listed) == 31 and one.status_code == 200 and one.json()["id"] == "sim/greedy-r4"
    with Simulator(SimConfig()) as sim:
        assert httpx.get(sim.llm_base_url + "/models/sim%2Fgreedy-r4", headers=auth).status_code == 404


def test_retry_after_is_drawn_from_the_range_per_request() -> None:
    config = FaultConfig(fail_429=1.0, retry_after_s=1, retry_after_max_s=5)
    injector = FaultInjector(config, 0, "chat")
    waits = [injector.decide(f"c{i}").retry_after_s for i in range(200)]
    assert set(waits) == {1, 2, 3, 4, 5}
    again = FaultInjector(config, 0, "chat")
    assert [again.decide(f"c{i}").retry_after_s for i in range(200)] == waits
    fixed = FaultInjector(FaultConfig(fail_429=1.0, retry_after_s=3), 0, "chat").decide("c")
    assert fixed.fault is Fault.RATE_LIMIT and fixed.retry_after_s is None


def test_the_drawn_retry_after_is_sent_in_header_and_message() -> None:
    faults = FaultConfig(fail_429=1.0, retry_after_s=2, retry_after_max_s=4)
    with Simulator(SimConfig(chat=faults)) as sim:
        replies = [
            httpx.post(
                sim.llm_base_url + "/chat/completions",
                json={"model": "sim/hasty", "messages": [{"role": "user", "content": f"q{i}"}]},
                headers={"Authorization": "Bearer k"},
            )
            for i in range(12)
        ]
    waits = {int(r.headers["retry-after"]) for r in replies}
    assert waits <= {2, 3, 4} and len(waits) > 1
    for r in replies:
        assert r.status_code == 429
        assert f"in {r.headers['retry-after']}s" in r.json()["error"]["message"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"retry_after_s": 3, "retry_after_max_s": 2},
            "retry_after_max_s needs retry_after_s and must be >= it",
        ),
        ({"retry_after_s": None, "retry_after_max_s": 2}, "retry_after_max_s needs retry_after_s"),
    ],
)
def test_a_bad_retry_after_range_is_refused(kwargs: dict[str, int | None], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FaultConfig(**kwargs)  # type: ignore[arg-type]


def test_serve_refuses_a_range_upside_down() -> None:
    result = CliRunner().invoke(cli, ["sim", "serve", "--retry-after", "5", "--retry-after-max", "1"])
    assert result.exit_code == 2
    assert "--retry-after-max 1 is below --retry-after 5" in result.output
