"""``oracleproto sim serve`` through click's CliRunner."""

from __future__ import annotations

import re

import httpx
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.sim.server import Simulator


def test_serve_prints_env_lines_and_serves_until_interrupted() -> None:
    seen: list[int] = []

    def wait(sim: Simulator) -> None:
        # Stands in for Ctrl-C: the server is up while we are called.
        seen.append(httpx.post(sim.search_base_url + "/search", json={"query": "x"}).status_code)

    result = CliRunner().invoke(cli, ["sim", "serve", "--seed", "4"], obj={"wait": wait})
    assert result.exit_code == 0, result.output
    assert seen == [401]  # no key given
    llm = re.search(r"^LLM_BASE_URL=(http://127\.0\.0\.1:\d+/v1)$", result.output, re.M)
    tavily = re.search(r"^TAVILY_BASE_URL=(http://127\.0\.0\.1:\d+)$", result.output, re.M)
    assert llm and tavily and llm.group(1) == tavily.group(1) + "/v1"
    assert "sim/careful" in result.output and "sim/detector" in result.output
    assert result.output.rstrip().endswith("simulator stopped")


def test_server_answers_while_the_command_waits() -> None:
    answers: list[int] = []

    def wait(sim: Simulator) -> None:
        for key in ("k", "good"):
            response = httpx.post(
                sim.search_base_url + "/search",
                json={"query": "x"},
                headers={"Authorization": f"Bearer {key}"},
            )
            answers.append(response.status_code)

    result = CliRunner().invoke(cli, ["sim", "serve", "--revoked-key", "k"], obj={"wait": wait})
    assert result.exit_code == 0, result.output
    assert answers == [401, 200]


def test_rates_that_sum_above_one_are_rejected_with_a_clear_message() -> None:
    result = CliRunner().invoke(cli, ["sim", "serve", "--fail-5xx", "0.6", "--fail-429", "0.5"])
    assert result.exit_code == 2
    assert "--fail-5xx + --fail-429 + --fail-timeout = 1.1 exceeds 1" in result.output


def test_out_of_range_rate_is_rejected() -> None:
    result = CliRunner().invoke(cli, ["sim", "serve", "--fail-timeout", "2"])
    assert result.exit_code == 2 and "--fail-timeout" in result.output and "0<=x<=1" in result.output
