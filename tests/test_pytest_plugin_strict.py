"""The pytest plugin from a separate toy project, under pytest-asyncio's default strict mode.

The toy project has no ``asyncio_mode`` setting: its async test is marked ``@pytest.mark.asyncio``
as strict mode wants, and the plugin's async client fixtures must still run. It records one chat
exchange against the simulator, then replays it offline, and the cassette folder holds only the
cassettes afterwards (no ``.lock`` file). The recording leaves no connection open for the garbage
collector to find in a later test.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

TOY_TEST = """
import httpx
import pytest

from oracleproto.sim.harness import SIM_LLM_KEY
from oracleproto.sim.server import SimConfig, Simulator

MESSAGES = [{"role": "user", "content": "Will it rain? \\\\boxed{Yes}"}]
BODY = {"model": "sim/careful", "temperature": 0, "messages": MESSAGES}


@pytest.mark.asyncio
async def test_chat(oracleproto_llm_client: httpx.AsyncClient, oracleproto_mode: str) -> None:
    headers = {"Authorization": f"Bearer {SIM_LLM_KEY}"}
    if oracleproto_mode == "record":
        with Simulator(SimConfig(seed=0)) as sim:
            url = sim.llm_base_url + "/chat/completions"
            response = await oracleproto_llm_client.post(url, json=BODY, headers=headers)
    else:
        url = "http://127.0.0.1:9/v1/chat/completions"  # never contacted in replay
        response = await oracleproto_llm_client.post(url, json=BODY, headers=headers)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"]


def test_after() -> None:
    # Whatever the previous test left for the garbage collector is collected here, so an unclosed
    # connection would be reported ("unclosed transport", "unclosed <socket") in this run's output.
    import gc

    gc.collect()
"""


def test_plugin_async_fixtures_work_in_strict_mode(pytester: pytest.Pytester) -> None:
    """Record then replay from a toy project in strict mode; no lock file is left behind."""
    pytester.makefile(".toml", pyproject='[project]\nname = "toy"\nversion = "0"\n')
    pytester.makepyfile(test_toy=TOY_TEST)
    common = (
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-o",
        "asyncio_default_fixture_loop_scope=function",
    )
    recorded = pytester.runpytest_subprocess(
        *common, "-W", "always::ResourceWarning", "--oracleproto-mode=record"
    )
    recorded.assert_outcomes(passed=2)
    # The recording's live connection is closed by the fixtures, on the test's own event loop.
    assert "unclosed" not in recorded.stdout.str()
    replayed = pytester.runpytest_subprocess(*common, "--oracleproto-mode=replay")
    replayed.assert_outcomes(passed=2)
    replayed.stdout.fnmatch_lines(["*asyncio: mode=Mode.STRICT*"])
    cassette_dir = pytester.path / "tests" / "cassettes" / "test_toy" / "test_chat"
    left = sorted(p.relative_to(cassette_dir).as_posix() for p in cassette_dir.rglob("*"))
    assert ".lock" not in left
    assert any(name.endswith(".yaml") for name in left), left
