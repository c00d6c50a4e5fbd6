"""A broken setup fails at startup: base URLs must be http(s) with a host, keys must be sendable."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from oracleproto.cli.main import cli
from oracleproto.settings.checks import key_problem, url_problem

#: A key-like value whose every 4-character window is unlikely anywhere else in a message.
KEY = "Qz7vLp2mW9xK4rT8"


@pytest.mark.parametrize(
    "url",
    [
        "https://api.openai.com/v1",
        "http://127.0.0.1:8000/v1",
        "https://openrouter.ai/api/v1/",
        "HTTPS://API.EXAMPLE.TEST",
        "http://[::1]:9/v1",
        "https://例え.jp/v1",
        "https://host.example/v1?api-version=2024-06-01",
    ],
)
def test_http_and_https_urls_with_a_host_are_accepted(url: str) -> None:
    assert url_problem("LLM_BASE_URL", url) is None


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("not a url", "is not a URL: it contains a space"),
        ("api.openai.com/v1", "it does not start with http:// or https://"),
        ("localhost:8000/v1", "it does not start with http:// or https://"),
        ("ftp://files.example/v1", "must be an http:// or https:// URL"),
        ("https://", "has no host"),
        ("http:///v1", "has no host"),
        ("https://host.example:99999/v1", "its host or port cannot be read"),
        ("https://host.example/v1\n", "it contains a line break (CR/LF)"),
        ("https://host.exa\tmple/v1", "it contains a tab"),
        ("https://host.example/v1\x00", "it contains a control or invisible character"),
    ],
)
def test_a_bad_url_is_named_with_its_problem_and_not_echoed(url: str, reason: str) -> None:
    problem = url_problem("LEAK_DETECTOR_BASE_URL", url)
    assert problem is not None
    assert problem.startswith("LEAK_DETECTOR_BASE_URL ")
    assert reason in problem
    example = "e.g. https://openrouter.ai/api/v1"
    assert example in problem
    assert url.strip() not in problem.replace(example, "")


def _fragments(value: str, size: int = 4) -> set[str]:
    return {value[i : i + size] for i in range(len(value) - size + 1)}


@pytest.mark.parametrize(
    ("key", "kinds", "where"),
    [
        (f"{KEY}\r\n", "a line break (CR/LF)", "around it"),
        (f"{KEY}\nX-Injected: 1", "a line break (CR/LF) and a space", "in it"),
        (f"{KEY[:8]}\t{KEY[8:]}", "a tab", "in it"),
        (f" {KEY}", "a space", "around it"),
        (f"{KEY[:8]} {KEY[8:]}", "a space", "in it"),
        (f"{KEY}\x00", "a control or invisible character", "in it"),
        (f"{KEY[:8]}\u200b{KEY[8:]}", "a control or invisible character", "in it"),
        (f"{KEY[:8]}é{KEY[8:]}", "a non-ASCII character", "in it"),
    ],
)
def test_a_key_with_whitespace_or_control_characters_is_rejected_without_showing_it(
    key: str, kinds: str, where: str
) -> None:
    problem = key_problem("TAVILY_API_KEY[1]", key)
    assert problem is not None
    assert problem.startswith(f"TAVILY_API_KEY[1] has {kinds} {where}; ")
    assert "its value is not shown" in problem
    assert not any(fragment in problem for fragment in _fragments(KEY)), problem


def test_a_printable_key_is_accepted() -> None:
    assert key_problem("LLM_API_KEY", "sk-or-v1-" + KEY + "_-.~+/=") is None


LIVE_ENV = {
    "LLM_BASE_URL": "https://llm.example.test/v1",
    "LLM_API_KEY": f"llm-{KEY}",
    "MODELS": "vendor/m",
    "MODEL_TRAINING_CUTOFFS": "vendor/m=2025-01",
    "TAVILY_API_KEY": f"tavily-{KEY}",
    "LEAK_DETECTOR_MODEL": "vendor/judge",
}


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        ({"LLM_BASE_URL": "not a url"}, "LLM_BASE_URL is not a URL: it contains a space"),
        ({"TAVILY_BASE_URL": "tavily.example.test"}, "TAVILY_BASE_URL is not a URL: it does not start with"),
        (
            {"LEAK_DETECTOR_BASE_URL": "gopher://judge.example.test"},
            "LEAK_DETECTOR_BASE_URL must be an http://",
        ),
        ({"LLM_API_KEY": f"llm-{KEY}\r\n"}, "LLM_API_KEY has a line break (CR/LF) around it"),
        (
            {"TAVILY_API_KEY": f"tavily-{KEY},tavily-{KEY[:6]}\n{KEY[6:]}"},
            "TAVILY_API_KEY[1] has a line break",
        ),
        ({"LEAK_DETECTOR_API_KEY": f"judge {KEY}"}, "LEAK_DETECTOR_API_KEY has a space in it"),
    ],
)
def test_record_with_a_broken_setup_exits_2_at_startup_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken: dict[str, str], message: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["run", "--record", "--no-progress"], env={**LIVE_ENV, **broken})
    assert result.exit_code == 2, result.output
    assert "cannot record live" in result.output and message in result.output, result.output
    assert "Traceback" not in result.output
    assert not any(fragment in result.output for fragment in _fragments(KEY)), result.output
    assert list(tmp_path.iterdir()) == []  # no run directory, no runs/
