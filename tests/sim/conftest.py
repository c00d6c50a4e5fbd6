"""Helpers for the simulator tests: a forecasting prompt renderer and request builders."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from oracleproto.sim.server import SimConfig, Simulator

WEB_SEARCH = {
    "type": "function",
    "function": {
        "name": "web_search",
        "description": "Search the web.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
    },
}

_FORMATS = {
    "yes_no": "Your final answer MUST end with this exact format:\n\\boxed{Yes} or \\boxed{No}",
    "binary_named": "Your final answer MUST end with this exact format:\n\\boxed{<a>} or \\boxed{<b>}",
    "single": "This is a SINGLE-ANSWER question: exactly ONE of the listed options is correct.\n"
    "the single correct letter inside the box, e.g. \\boxed{A}.",
    "multi": "This is a MULTI-SELECT question: ONE OR MORE of the listed options can be correct.\n"
    "listing all correct option(s) you have identified, separated by commas, within the box.",
}


def _render(event: str, kind: str, options: tuple[str, ...] = (), end_time: str = "2026-03-15") -> str:
    """A prompt in the paper's template shape (our own wording of the format blocks)."""
    block = "".join(f"\n{chr(65 + i)}. {label}" for i, label in enumerate(options))
    fmt = _FORMATS[kind]
    if kind == "binary_named":
        fmt = fmt.replace("<a>", options[0]).replace("<b>", options[1])
        block = ""
    return (
        f'You are an agent that can predict future events. The event to be predicted: "{event} '
        f'(resolved around {end_time} (GMT+8)).{block}"\n\nIMPORTANT: Your final answer MUST end with this '
        f"exact format:\n{fmt}\nDo not refuse to make a prediction."
    )


def _chat_body(
    model: str, messages: list[dict[str, Any]], tools: bool = True, **extra: Any
) -> dict[str, Any]:
    """A main-LLM request body as the harness sends it."""
    body: dict[str, Any] = {"model": model, "messages": messages, "temperature": 0.7, "top_p": 1.0}
    body["max_tokens"] = 4096
    if tools:
        body["tools"] = [WEB_SEARCH]
    body.update(extra)
    return body


@pytest.fixture
def sim() -> Iterator[Simulator]:
    """A fault-free simulator with seed 7."""
    with Simulator(SimConfig(seed=7)) as server:
        yield server


@pytest.fixture
def render() -> Callable[..., str]:
    """Render a forecasting prompt: ``render(event, kind, options=(), end_time=...)``."""
    return _render


@pytest.fixture
def chat_body() -> Callable[..., dict[str, Any]]:
    """Build a chat request body: ``chat_body(model, messages, tools=True, **extra)``."""
    return _chat_body
