"""The simulator through the real openai SDK: model listing and a clear refusal of streaming."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from oracleproto.sim.harness import SIM_LLM_KEY
from oracleproto.sim.models_api import model_ids
from oracleproto.sim.server import SimConfig, Simulator

if TYPE_CHECKING:
    import openai

QUESTION = (
    "Will the fictional Lake Orrin ferry resume service before 2026-06-01? "
    "Answer \\boxed{Yes} or \\boxed{No}."
)


@pytest.fixture
def client() -> Iterator[openai.OpenAI]:
    # Imported here, not at the top: the SDK takes about 0.4 s of CPU to import, which every test
    # worker would otherwise pay while collecting, not only the one that runs these tests.
    import openai

    with Simulator(SimConfig(seed=0)) as sim:
        sdk = openai.OpenAI(base_url=sim.llm_base_url, api_key=SIM_LLM_KEY, max_retries=0)
        try:
            yield sdk
        finally:
            sdk.close()


def test_models_list_and_retrieve_in_openai_shape(client: openai.OpenAI) -> None:
    """``GET /v1/models`` lists every simulated model; ``/v1/models/{id}`` finds one, 404s others."""
    import openai

    listed = [m.id for m in client.models.list()]
    assert listed == model_ids()
    assert {"sim/careful", "sim/hasty", "sim/sloppy", "sim/detector"} <= set(listed)
    one = client.models.retrieve("sim/careful")
    assert (one.id, one.object, one.owned_by) == ("sim/careful", "model", "oracleproto-sim")
    with pytest.raises(openai.NotFoundError, match="sim/nope"):
        client.models.retrieve("sim/nope")


def test_stream_true_is_refused_with_an_openai_error(client: openai.OpenAI) -> None:
    """``stream=True`` gets a 400 ``invalid_request_error`` naming the parameter, not an empty stream."""
    import openai

    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(
            model="sim/careful", messages=[{"role": "user", "content": QUESTION}], stream=True
        )
    assert caught.value.status_code == 400
    body = caught.value.body
    assert isinstance(body, dict)
    assert body["param"] == "stream"
    assert body["type"] == "invalid_request_error"
    assert "Streaming is not supported" in body["message"]


def test_non_streaming_chat_still_answers(client: openai.OpenAI) -> None:
    """The same request without streaming is answered normally."""
    done = client.chat.completions.create(
        model="sim/careful", messages=[{"role": "user", "content": QUESTION}], temperature=0
    )
    assert done.choices[0].message.content
