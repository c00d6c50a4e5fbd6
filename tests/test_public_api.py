"""The public API is exactly what ``__all__`` lists, and every name resolves."""

from __future__ import annotations

import oracleproto

EXPECTED_AT_LEAST = {
    "Question",
    "PromptTemplates",
    "ErrorKind",
    "DatasetError",
    "ConfigError",
    "Settings",
    "load_settings",
    "load_questions",
    "load_templates",
    "render_prompt",
    "parse_answer",
    "parse_belief",
    "RuntimeProtocols",
    "prompt_templates_hash",
    "admissible",
    "Admission",
    "classify_error",
    "parse_verdict",
    "OpenAIChatClient",
    "TavilySearch",
    "TavilyKeyPool",
    "LeakDetector",
    "FilteredSearch",
}


def test_all_names_resolve() -> None:
    for name in oracleproto.__all__:
        assert hasattr(oracleproto, name), name


def test_all_is_sorted_and_unique() -> None:
    assert list(oracleproto.__all__) == sorted(set(oracleproto.__all__))


def test_core_names_exported() -> None:
    assert set(oracleproto.__all__) >= EXPECTED_AT_LEAST
