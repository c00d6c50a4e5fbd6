"""Our cassettes load in real vcrpy unmodified: a recorded LLM call replays through httpx and the openai SDK.

vcrpy is a test dependency only (nothing in the package imports it); these tests keep the YAML
files readable by the tool whose format they follow. ``record_mode="none"``: vcrpy must serve
every request from the cassette, and sockets are disabled, so nothing reaches a network.

vcrpy and the openai SDK are imported inside the tests: together they take about 0.4 s of CPU to
import, which every test worker would otherwise pay while collecting, not only the one that runs
these tests.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from oracleproto.verify.demo import find_demo_run

PLUGIN_CASSETTE = (
    Path(__file__).resolve().parents[1]
    / "cassettes/test_pytest_plugin/test_chat_exchange_replays_from_committed_cassette/llm/sim__careful.yaml"
)


def _first_interaction(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.load(path.read_bytes(), Loader=yaml.CSafeLoader)
    first: dict[str, Any] = loaded["interactions"][0]
    return first


def _copy(path: Path, tmp_path: Path) -> Path:
    """A byte-identical copy: vcrpy never writes in record_mode none, but the repo stays untouched anyway."""
    target = tmp_path / path.name
    shutil.copyfile(path, target)
    assert target.read_bytes() == path.read_bytes()
    return target


@pytest.mark.disable_socket
def test_demo_llm_cassette_replays_through_httpx(tmp_path: Path) -> None:
    """vcrpy serves the demo run's first recorded chat completion to a plain httpx client."""
    import vcr

    source = find_demo_run() / "cassettes" / "llm" / "sim__careful__r5__c4.yaml"
    cassette = _copy(source, tmp_path)
    recorded = _first_interaction(cassette)
    request = recorded["request"]
    with vcr.VCR(record_mode="none").use_cassette(str(cassette)) as played:
        response = httpx.post(
            request["uri"],
            content=request["body"].encode("utf-8"),
            headers={"content-type": "application/json"},
        )
        assert played.play_count == 1
    assert response.status_code == recorded["response"]["status"]["code"]
    assert response.text == recorded["response"]["body"]["string"]
    assert cassette.read_bytes() == source.read_bytes()


@pytest.mark.disable_socket
def test_recorded_chat_replays_through_the_openai_sdk(tmp_path: Path) -> None:
    """The openai SDK, pointed at the recorded host, gets the recorded completion from vcrpy."""
    import openai
    import vcr

    cassette = _copy(PLUGIN_CASSETTE, tmp_path)
    recorded = _first_interaction(cassette)
    body = json.loads(recorded["request"]["body"])
    base_url = recorded["request"]["uri"].removesuffix("/chat/completions")
    expected = json.loads(recorded["response"]["body"]["string"])
    with vcr.VCR(record_mode="none").use_cassette(str(cassette)) as played:
        client = openai.OpenAI(base_url=base_url, api_key="sk-test-planted-fake-vcrpy", max_retries=0)
        try:
            completion = client.chat.completions.create(
                model=body["model"], messages=body["messages"], temperature=body.get("temperature")
            )
        finally:
            client.close()
        assert played.play_count == 1
    assert completion.id == expected["id"]
    assert completion.choices[0].message.content == expected["choices"][0]["message"]["content"]
