"""How the viewer shows a trace message's tool calls (view/samples.py)."""

from __future__ import annotations

from oracleproto.view.samples import _message


def test_function_custom_and_broken_calls_are_shown_by_name_and_arguments() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "f", "type": "function", "function": {"name": "web_search", "arguments": "{}"}},
            {"id": "c", "type": "custom", "custom": {"name": "grammar", "input": "free text"}},
            {"id": "s", "type": "function", "function": "not an object"},
            {"id": "m", "type": "custom"},
            "not a call",
        ],
    }
    assert _message(message)["tool_calls"] == [
        {"id": "f", "name": "web_search", "arguments": "{}"},
        {"id": "c", "name": "grammar", "arguments": "free text"},
        {"id": "s", "name": None, "arguments": None},
        {"id": "m", "name": None, "arguments": None},
    ]
