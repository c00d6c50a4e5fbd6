"""The project's own use of the oracleproto pytest plugin: a provider exchange replayed offline.

The cassette under ``tests/cassettes/test_pytest_plugin/`` was recorded against the simulator with
``pytest tests/test_pytest_plugin.py --oracleproto-mode=record``; by default the test replays it
with every socket blocked.
"""

from __future__ import annotations

import json
import socket
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from oracleproto.context import CallContext, call_context
from oracleproto.primitives.clock import SystemClock
from oracleproto.providers import OpenAIChatClient
from oracleproto.settings.model import LLMSettings
from oracleproto.sim.harness import SIM_LLM_KEY
from oracleproto.sim.server import SimConfig, Simulator
from oracleproto.transport import CassetteStore
from oracleproto.transport.recorder import Mode

pytest_plugins = ["pytester"]
QUESTION = (
    "Will the fictional Lake Orrin ferry resume service before 2026-06-01? "
    "Answer \\boxed{Yes} or \\boxed{No}."
)


async def test_chat_exchange_replays_from_committed_cassette(
    oracleproto_mode: Mode,
    oracleproto_llm_client: httpx.AsyncClient,
    oracleproto_cassette_dir: Path,
    oracleproto_offline: bool,
) -> None:
    """Record once against the simulator; replay returns exactly the recorded completion, offline."""
    with ExitStack() as stack:
        if oracleproto_mode == "replay":
            base_url = "http://127.0.0.1:9/v1"  # never contacted: replay opens no socket
            with pytest.raises(Exception, match=r"(?i)socket|block"):
                socket.create_connection(("127.0.0.1", 9), timeout=1)
        else:
            base_url = stack.enter_context(Simulator(SimConfig(seed=0))).llm_base_url
        settings = LLMSettings.from_values(
            {"base_url": base_url, "models": ["sim/careful"], "training_cutoffs": {"sim/careful": "2026-01"}}
        )
        chat = OpenAIChatClient(oracleproto_llm_client, settings, SystemClock(), api_key=SIM_LLM_KEY)
        with call_context(CallContext("sim/careful", "plugin-q1", 0)):
            response = await chat.complete("sim/careful", [{"role": "user", "content": QUESTION}], [])
    assert oracleproto_offline == (oracleproto_mode == "replay")
    if oracleproto_mode == "replay":
        entries = CassetteStore(oracleproto_cassette_dir, writable=False).effective_entries()
        assert len(entries) == 1
        recorded = json.loads(entries[0].body)
        assert response.content == recorded["choices"][0]["message"]["content"]
        assert response.response_id == recorded["id"]
        assert (
            SIM_LLM_KEY.encode() not in (oracleproto_cassette_dir / "llm" / "sim__careful.yaml").read_bytes()
        )


def test_plugin_option_and_missing_cassettes_message(pytester: pytest.Pytester) -> None:
    """A user's test in replay mode without cassettes fails, naming the folder and how to record."""
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(
        test_user="""
        def test_needs_cassettes(oracleproto_recorder):
            pass

        def test_mode(oracleproto_mode):
            assert oracleproto_mode == "refresh"
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--oracleproto-mode=replay")
    result.assert_outcomes(passed=0, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*no cassettes at*tests/cassettes/test_user/test_needs_cassettes*--oracleproto-mode=record*"]
    )
    result.stdout.fnmatch_lines(["*assert 'replay' == 'refresh'*"])
